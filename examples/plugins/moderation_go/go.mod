module apconnect/examples/plugins/moderation_go

go 1.26

require apconnect/sdk-guest v0.0.0

replace apconnect/sdk-guest => ../../../sdk-guest
