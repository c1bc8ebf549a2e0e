// Writes or dumps a pogreb database, to derive olmpack's pogreb test vectors from the real
// library (github.com/akrylysov/pogreb v0.10.2, hash seed fixed through POGREB_TEST_SEED).
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/akrylysov/pogreb"
	pfs "github.com/akrylysov/pogreb/fs"
)

type input struct {
	Pairs [][2]string `json:"pairs"` // key, base64 value, in insertion order
	Deletes []string `json:"deletes"`
}

func main() {
	mode, dir := os.Args[1], os.Args[2]
	switch mode {
	case "write":
		var in input
		data, err := os.ReadFile(os.Args[3])
		check(err)
		check(json.Unmarshal(data, &in))
		db, err := pogreb.Open(dir, &pogreb.Options{FileSystem: pfs.OSMMap})
		check(err)
		for _, p := range in.Pairs {
			v, err := base64.StdEncoding.DecodeString(p[1])
			check(err)
			check(db.Put([]byte(p[0]), v))
		}
		for _, k := range in.Deletes {
			check(db.Delete([]byte(k)))
		}
		check(db.Close())
	case "dump":
		db, err := pogreb.Open(dir, &pogreb.Options{FileSystem: pfs.OSMMap})
		check(err)
		it := db.Items()
		out := map[string]string{}
		for {
			k, v, err := it.Next()
			if err == pogreb.ErrIterationDone {
				break
			}
			check(err)
			out[string(k)] = base64.StdEncoding.EncodeToString(v)
		}
		keys := make([]string, 0, len(out))
		for k := range out {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v, err := db.Get([]byte(k))
			check(err)
			if base64.StdEncoding.EncodeToString(v) != out[k] {
				panic("get differs from items for " + k)
			}
		}
		fmt.Printf("count %d\n", db.Count())
		enc := json.NewEncoder(os.Stdout)
		check(enc.Encode(out))
		check(db.Close())
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
