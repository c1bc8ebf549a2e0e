// opm's serve-cache digest, reimplemented with the standard library only, exactly as
// operator-registry's pkg/cache/tar.go (fsToTar) and pkg/cache/json.go (ComputeDigest) compute
// it: FNV-64a over Go's archive/tar serialization of the catalog folder, then of <cache>/cache.
//
// Usage: go run main.go CATALOG_DIR CACHE_DIR [CATALOG_DIR CACHE_DIR ...]
// Prints one digest (16 hex digits) per pair, one per line.
package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"time"
)

func fsToTar(w io.Writer, fsys fs.FS, buf []byte) error {
	tw := tar.NewWriter(w)
	if err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("get file info for %q: %v", path, err)
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return fmt.Errorf("build tar file info header for %q: %v", path, err)
		}
		h.Uid = 0
		h.Gid = 0
		h.Uname = ""
		h.Gname = ""
		h.AccessTime = time.Time{}
		h.ChangeTime = time.Time{}
		h.ModTime = time.Time{}
		h.Name = path
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("write tar header for %q: %v", path, err)
		}
		if d.IsDir() {
			return nil
		}
		f, err := fsys.Open(path)
		if err != nil {
			return fmt.Errorf("open file %q: %v", path, err)
		}
		defer f.Close()
		if _, err := io.CopyBuffer(tw, f, buf); err != nil {
			return fmt.Errorf("write tar data for %q: %v", path, err)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("write tar: %w", err)
	}
	return tw.Close()
}

func computeDigest(catalog, cacheDir string) (string, error) {
	buf := make([]byte, 32*1024)
	h := fnv.New64a()
	if err := fsToTar(h, os.DirFS(catalog), buf); err != nil {
		return "", err
	}
	if cacheFS, err := fs.Sub(os.DirFS(cacheDir), "cache"); err == nil {
		if err := fsToTar(h, cacheFS, buf); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("compute hash: %v", err)
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

func main() {
	args := os.Args[1:]
	if len(args) == 0 || len(args)%2 != 0 {
		fmt.Fprintln(os.Stderr, "usage: main.go CATALOG_DIR CACHE_DIR [...]")
		os.Exit(2)
	}
	for i := 0; i < len(args); i += 2 {
		d, err := computeDigest(args[i], args[i+1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(d)
	}
}
