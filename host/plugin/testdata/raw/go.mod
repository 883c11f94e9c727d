module raw

go 1.26
