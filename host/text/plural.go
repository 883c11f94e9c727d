package text

import "strconv"

// Plural writes a count with the noun's singular or plural form: "1 room",
// "3 rooms".
func Plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}
