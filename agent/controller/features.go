package controller

// enabledFeatures returns the parts of the controller role the request turns on.
func (c *Controller) enabledFeatures() []feature {
	var fs []feature
	if c.req.Services {
		fs = append(fs, newServices(c))
	}
	if c.req.NetworkPolicy {
		fs = append(fs, newPolicies(c))
	} else {
		fs = append(fs, policyRowsOff{c: c})
	}
	return fs
}
