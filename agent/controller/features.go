package controller

// enabledFeatures returns the parts of the controller role the request turns on.
func (c *Controller) enabledFeatures() []feature {
	var fs []feature
	if c.req.Services {
		fs = append(fs, newServices(c))
	}
	return fs
}
