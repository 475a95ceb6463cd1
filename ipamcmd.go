package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/sqlitestore"
)

// runIPAM prints the allocations of an IPAM database, for diagnosis from a shell. It opens
// the database read-only, beside a running daemon, and never migrates or creates it.
func runIPAM(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("edgeovn ipam", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "/var/lib/edgeovn/ipam.db", "SQLite IPAM database")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store, err := sqlitestore.OpenReadOnly(ctx, *db, log)
	if err != nil {
		return err
	}
	defer store.Close()
	m, err := ipam.New(ctx, store, log)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBNET\tPOD\tINTERFACE\tIP\tMAC\tALLOCATED")
	for _, a := range m.Allocations() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\t%s\n", a.Subnet, a.Owner.Pod, a.Owner.Interface, a.IPs, a.MAC, a.Allocated.Format("2006-01-02T15:04:05Z07:00"))
	}
	return tw.Flush()
}
