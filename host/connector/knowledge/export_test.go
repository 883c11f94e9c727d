package knowledge

// SetStatusBounds lowers knowledge_status's scan bounds (pages of limit
// records) for a test.
func (c *Module) SetStatusBounds(pages int, limit int64) { c.statusPages, c.statusLimit = pages, limit }
