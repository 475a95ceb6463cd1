// Package configfile reads edgeovn's YAML configuration file (/etc/edgeovn/config.yaml) onto
// a flag.FlagSet: every key is the name of one of the command's flags and its value is what
// the command line would give that flag, so the file and the flags can never disagree about
// what an option means or how it is checked, and an option added as a flag is settable in the
// file at once.
//
// Invariants: decoding is strict. A key that names no flag, a value the flag refuses, a list
// for a flag that takes one value, a nested mapping, an empty value or a key given twice is an
// error naming the file, the line, the key and the value; the first error stops the load.
// Values are taken as written (the YAML scalar's text), so `node-name: 0123` is "0123" and
// `services: yes` is refused by the flag rather than turned into true.
package configfile
