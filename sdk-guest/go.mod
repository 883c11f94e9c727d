module apconnect/sdk-guest

go 1.26
