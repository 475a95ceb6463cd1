package controller

// enabledFeatures returns the parts of the controller role the request turns on.
func (c *Controller) enabledFeatures() []feature {
	var fs []feature
	return fs
}
