package client

// Page is one page of an Agent Identity list (8.2): the items in the
// endpoint's order and the cursor of the next page ("" when none follows).
type Page[T any] struct {
	// Items are the page's results.
	Items []T
	// NextCursor is next_cursor: pass it back as the cursor to read on.
	NextCursor string
}
