// Package benchkit is what edgeovn's bench commands (bench/*) share: clients of a rig
// fast enough not to be what is measured, and the percentiles and formatting of their tables.
// It measures nothing itself and holds no state beyond the clients it returns.
package benchkit
