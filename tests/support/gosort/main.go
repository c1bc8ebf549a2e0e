// The reference side of tests/library/gosort_go.rs: each line of stdin is one case, integer keys
// separated by spaces. Go's sort.Slice sorts the positions by key (the comparison opm uses for
// relatedImages: key only, so equal keys land where pdqsort puts them), and the line printed is
// the resulting order of the original positions. Standard library only: it builds offline.
package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		fields := strings.Fields(in.Text())
		type entry struct{ key, pos int }
		entries := make([]entry, len(fields))
		for i, f := range fields {
			k, err := strconv.Atoi(f)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bad key %q\n", f)
				os.Exit(1)
			}
			entries[i] = entry{k, i}
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].key < entries[j].key })
		order := make([]string, len(entries))
		for i, e := range entries {
			order[i] = strconv.Itoa(e.pos)
		}
		fmt.Fprintln(out, strings.Join(order, " "))
	}
}
