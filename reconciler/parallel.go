package reconciler

import "sync"

// maxParallel bounds the resources of one layer, or the items of one
// collection, reconciled at once.
const maxParallel = 8

// eachAtOnce calls do(i) for every i < n, at most maxParallel at a time,
// and returns when all have returned. The caller's goroutine takes the last
// one itself, so a layer of one resource (every layer of a chain) starts no
// goroutine: a new goroutine's stack starts small and is copied as an
// apply's deep calls grow it, a tenth of kroscope's CPU in the chain
// benchmark when each resource had its own. A slot is taken before a
// goroutine starts, so a collection of thousands never has more than
// maxParallel goroutines waiting.
func eachAtOnce(n int, do func(i int)) {
	if n <= 0 {
		return
	}
	sem := make(chan struct{}, maxParallel)
	var wg sync.WaitGroup
	for i := range n - 1 {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			do(i)
		})
	}
	sem <- struct{}{}
	do(n - 1)
	<-sem
	wg.Wait()
}
