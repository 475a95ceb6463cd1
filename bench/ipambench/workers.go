package main

import (
	"sync"
	"sync/atomic"
	"time"
)

// concurrently calls do(1..n) from workers goroutines, each taking the next number, and
// returns the wall time; the first error stops its worker and is returned.
func concurrently(n, workers int, do func(i int64) error) (rate, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := do(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return rate{}, err
	}
	return rate{n, d}, nil
}
