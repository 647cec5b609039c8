package main

import (
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unsafe"
)

const (
	maxLinkHops     = 40
	defaultReadMax  = 32 << 20
	defaultListMax  = 1000
	listLimitCeil   = 100000
	swapRetries     = 4
	atRemoveDir     = 0x200
	oPath           = 0x200000 // O_PATH: opens a name without opening the file (syscall does not name it)
	openPathNoLinks = oPath | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
)

// walked is where a walk ended: the directory holding the target, open, and the target if it exists.
type walked struct {
	// parent is an O_PATH descriptor of the directory holding the target.
	parent int
	// parentParts are the real components (no links) of parent below the root.
	parentParts []string
	// name is the target's name in parent; "" when the target is the root.
	name string
	// target is an O_PATH descriptor of the target (the link itself when a final link is not followed), -1 when missing.
	target int
	st     syscall.Stat_t
	held   []int
}

func (w *walked) close() {
	for _, fd := range w.held {
		syscall.Close(fd)
	}
	w.held = nil
}

func (w *walked) realParts() []string {
	if w.name == "" {
		return w.parentParts
	}
	return append(append([]string{}, w.parentParts...), w.name)
}

// relInside is target relative to root compared by components; false when outside.
func relInside(root, target string) (string, bool) {
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(target))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	if rel == "." {
		return "", true
	}
	return rel, true
}

// parts checks a client's path by components only: relative to the root, or absolute inside it.
func (s *server) parts(userPath string) ([]string, error) {
	if strings.ContainsRune(userPath, 0) {
		return nil, fail("INVALID_ARGUMENT", "invalid 'path': it holds a NUL byte")
	}
	p := userPath
	if strings.TrimSpace(p) == "" {
		p = "."
	}
	if filepath.IsAbs(p) {
		rel, ok := relInside(s.root, p)
		if !ok {
			rel, ok = relInside(s.realRoot, p)
		}
		if !ok {
			return nil, fail("PATH_OUTSIDE_WORKSPACE", "'%s' is outside the workspace; use a path relative to the workspace root", userPath)
		}
		p = rel
	}
	rel, ok := relInside(s.root, filepath.Join(s.root, p))
	if !ok {
		return nil, fail("PATH_OUTSIDE_WORKSPACE", "'%s' is outside the workspace", userPath)
	}
	if rel == "" {
		return nil, nil
	}
	return strings.Split(rel, "/"), nil
}

func components(parts []string) []string {
	out := make([]string, 0, len(parts))
	for _, c := range parts {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// walk opens a workspace path one component at a time with O_NOFOLLOW relative to the
// directory opened before it, so no component can be swapped for a link between a check
// and a use. Links are followed by hand (read through their own descriptor) and must stay
// inside. Everything is O_PATH: a FIFO or a device is never opened.
func (s *server) walk(userPath string, parts []string, followLast, makeDirs bool) (*walked, error) {
	w := &walked{target: -1}
	success := false
	defer func() {
		if !success {
			w.close()
		}
	}()
	open := func(dir int, name string) (int, error) {
		fd, err := syscall.Openat(dir, name, openPathNoLinks, 0)
		if err == nil {
			w.held = append(w.held, fd)
		}
		return fd, err
	}
	release := func(fd int) {
		for i, h := range w.held {
			if h == fd {
				w.held = append(w.held[:i], w.held[i+1:]...)
				break
			}
		}
		syscall.Close(fd)
	}
	outside := fail("PATH_OUTSIDE_WORKSPACE", "'%s' leads outside the workspace through a symbolic link", userPath)
	type level struct {
		fd   int
		name string
	}
	var stack []level
	here := func() int {
		if len(stack) > 0 {
			return stack[len(stack)-1].fd
		}
		return s.rootFd
	}
	done := func(name string, target int, st *syscall.Stat_t) (*walked, error) {
		w.parent = here()
		for _, l := range stack {
			w.parentParts = append(w.parentParts, l.name)
		}
		w.name, w.target = name, target
		if st != nil {
			w.st = *st
		}
		success = true
		return w, nil
	}
	// The directory the walk stands in is itself the target (a path ending in '..', a link to '.').
	herself := func() (*walked, error) {
		var st syscall.Stat_t
		if len(stack) == 0 {
			if err := syscall.Fstat(s.rootFd, &st); err != nil {
				return nil, errnoError(err, userPath)
			}
			return done("", s.rootFd, &st)
		}
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := syscall.Fstat(top.fd, &st); err != nil {
			return nil, errnoError(err, userPath)
		}
		return done(top.name, top.fd, &st)
	}
	todo := components(parts)
	if len(todo) == 0 {
		return herself()
	}
	hops := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		if name == ".." {
			if len(stack) == 0 {
				return nil, outside
			}
			release(stack[len(stack)-1].fd)
			stack = stack[:len(stack)-1]
			if len(todo) == 0 {
				return herself()
			}
			continue
		}
		last := len(todo) == 0
		fd, err := open(here(), name)
		if err != nil {
			if err != syscall.ENOENT {
				return nil, errnoError(err, userPath)
			}
			if last || !makeDirs {
				return done(name, -1, nil)
			}
			if hops++; hops > maxLinkHops {
				return nil, fail("IO_ERROR", "'%s' keeps changing while its directories are made", userPath)
			}
			if err := syscall.Mkdirat(here(), name, 0o755); err != nil && err != syscall.EEXIST {
				return nil, errnoError(err, userPath)
			}
			todo = append([]string{name}, todo...)
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return nil, errnoError(err, userPath)
		}
		switch st.Mode & syscall.S_IFMT {
		case syscall.S_IFLNK:
			if last && !followLast {
				return done(name, fd, &st)
			}
			link, err := readlinkFd(fd)
			release(fd)
			if err != nil {
				return nil, errnoError(err, userPath)
			}
			if hops++; hops > maxLinkHops {
				return nil, fail("INVALID_ARGUMENT", "invalid 'path': '%s' goes through a loop of symbolic links", userPath)
			}
			if filepath.IsAbs(link) {
				rel, ok := relInside(s.root, link)
				if !ok {
					rel, ok = relInside(s.realRoot, link)
				}
				if !ok {
					return nil, outside
				}
				// An absolute target is walked from the root again.
				for _, l := range stack {
					release(l.fd)
				}
				stack = nil
				todo = append(components(strings.Split(rel, "/")), todo...)
			} else {
				todo = append(components(strings.Split(link, "/")), todo...)
			}
			if len(todo) == 0 {
				return herself()
			}
		case syscall.S_IFDIR:
			if last {
				return done(name, fd, &st)
			}
			stack = append(stack, level{fd, name})
		default:
			if last {
				return done(name, fd, &st)
			}
			return nil, fail("NOT_A_DIRECTORY", "a parent of '%s' is not a directory", userPath)
		}
	}
	return nil, fail("INTERNAL", "the walk of '%s' ended without a target", userPath)
}

// readlinkFd reads a link through its own O_PATH descriptor: the link we checked, not a name.
func readlinkFd(fd int) (string, error) {
	buf := make([]byte, 4096)
	empty := []byte{0}
	n, _, e := syscall.Syscall6(syscall.SYS_READLINKAT, uintptr(fd), uintptr(unsafe.Pointer(&empty[0])), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if e != 0 {
		return "", e
	}
	return string(buf[:n]), nil
}

func errnoError(err error, userPath string) error {
	if _, ok := err.(*opError); ok {
		return err
	}
	switch err {
	case syscall.ENOENT:
		return fail("FILE_NOT_FOUND", "no such file: '%s'", userPath)
	case syscall.EISDIR:
		return fail("NOT_A_FILE", "'%s' is a directory", userPath)
	case syscall.ENOTDIR:
		return fail("NOT_A_DIRECTORY", "a parent of '%s' is not a directory", userPath)
	case syscall.ELOOP:
		return fail("PATH_OUTSIDE_WORKSPACE", "'%s' changed into a symbolic link while it was opened", userPath)
	case syscall.EEXIST:
		return fail("FILE_EXISTS", "'%s' already exists", userPath)
	case syscall.ENXIO, syscall.EAGAIN:
		return fail("NOT_A_FILE", "'%s' is not a regular file, or is in use", userPath)
	case syscall.EACCES, syscall.EPERM:
		return fail("PERMISSION_DENIED", "'%s': permission denied", userPath)
	}
	return fail("IO_ERROR", "file operation on '%s' failed: %v", userPath, err)
}

func kindOf(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return "file"
	case syscall.S_IFDIR:
		return "dir"
	case syscall.S_IFLNK:
		return "symlink"
	}
	return "other"
}

func specialKind(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
		return "a FIFO (named pipe)"
	case syscall.S_IFSOCK:
		return "a socket"
	case syscall.S_IFCHR:
		return "a character device"
	case syscall.S_IFBLK:
		return "a block device"
	case syscall.S_IFLNK:
		return "a symbolic link"
	}
	return "not a regular file"
}

// plainFile refuses all but regular files; a hard link may be a file outside under a name inside.
func plainFile(st *syscall.Stat_t, userPath string, allowLinks bool) error {
	if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		return fail("NOT_A_FILE", "'%s' is a directory", userPath)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return fail("NOT_A_FILE", "'%s' is %s; file operations read and write regular files only", userPath, specialKind(st.Mode))
	}
	if st.Nlink > 1 && !allowLinks {
		return fail("PATH_OUTSIDE_WORKSPACE", "'%s' is a hard link (%d names for one file), which may be a file outside the workspace; hard links are refused", userPath, st.Nlink)
	}
	return nil
}

// directory is a command's working directory: inside, existing, a directory, as a real path.
func (s *server) directory(cwd string) (string, error) {
	parts, err := s.parts(cwd)
	if err != nil {
		return "", err
	}
	w, err := s.walk(cwd, parts, true, false)
	if err != nil {
		return "", err
	}
	defer w.close()
	if w.target < 0 {
		return "", fail("FILE_NOT_FOUND", "invalid 'cwd': no such directory '%s'", cwd)
	}
	if w.st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return "", fail("NOT_A_DIRECTORY", "invalid 'cwd': '%s' is not a directory", cwd)
	}
	return filepath.Join(append([]string{s.realRoot}, w.realParts()...)...), nil
}

type readResult struct {
	Data      []byte `json:"data"`
	Size      int64  `json:"size"`
	Truncated bool   `json:"truncated"`
}

func (s *server) read(req request) (any, error) {
	parts, err := s.parts(req.Path)
	if err != nil {
		return nil, err
	}
	max := int64(defaultReadMax)
	if req.MaxBytes != nil && *req.MaxBytes >= 0 {
		max = *req.MaxBytes
	}
	for tries := 0; ; tries++ {
		res, swapped, err := s.readOnce(req.Path, parts, max)
		if !swapped || tries >= swapRetries {
			return res, err
		}
	}
}

// readOnce opens the walked file by name with O_NOFOLLOW|O_NONBLOCK and proves it is the inode the walk checked.
func (s *server) readOnce(userPath string, parts []string, max int64) (any, bool, error) {
	w, err := s.walk(userPath, parts, true, false)
	if err != nil {
		return nil, false, err
	}
	defer w.close()
	if w.target < 0 {
		return nil, false, fail("FILE_NOT_FOUND", "no such file: '%s'", userPath)
	}
	if err := plainFile(&w.st, userPath, false); err != nil {
		return nil, false, err
	}
	fd, err := syscall.Openat(w.parent, w.name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err == syscall.ENOENT || err == syscall.ELOOP, errnoError(err, userPath)
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, false, errnoError(err, userPath)
	}
	if st.Dev != w.st.Dev || st.Ino != w.st.Ino {
		return nil, true, fail("IO_ERROR", "'%s' keeps changing while it is read", userPath)
	}
	// One more byte than allowed tells a file that grew past the limit.
	data := make([]byte, 0, min(st.Size, max)+1)
	chunk := make([]byte, 64<<10)
	for int64(len(data)) <= max {
		m, err := syscall.Read(fd, chunk[:min(int64(len(chunk)), max+1-int64(len(data)))])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false, errnoError(err, userPath)
		}
		if m == 0 {
			break
		}
		data = append(data, chunk[:m]...)
	}
	truncated := int64(len(data)) > max
	if truncated {
		data = data[:max]
	}
	return readResult{Data: data, Size: st.Size, Truncated: truncated}, false, nil
}

func (s *server) write(req request) (any, error) {
	parts, err := s.parts(req.Path)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return nil, fail("NOT_A_FILE", "'%s' is the workspace root, a directory", req.Path)
	}
	w, err := s.walk(req.Path, parts, true, true)
	if err != nil {
		return nil, err
	}
	defer w.close()
	if w.name == "" {
		return nil, fail("NOT_A_FILE", "'%s' is a directory", req.Path)
	}
	mode := uint32(0o644)
	uid, gid := -1, -1
	if w.target >= 0 {
		// A hard link is only renamed over here: the file behind its other names is untouched.
		if err := plainFile(&w.st, req.Path, true); err != nil {
			return nil, err
		}
		if req.Exclusive {
			return nil, fail("FILE_EXISTS", "'%s' already exists", req.Path)
		}
		mode = w.st.Mode & 0o777
		uid, gid = int(w.st.Uid), int(w.st.Gid)
	}
	if req.Mode != nil {
		mode = *req.Mode & 0o777
	}
	prefix := w.name
	if len(prefix) > 40 {
		prefix = prefix[:40]
	}
	tmp := "." + prefix + ".benchgym-" + randomHex(6) + ".tmp"
	fd, err := syscall.Openat(w.parent, tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, errnoError(err, req.Path)
	}
	ok := false
	defer func() {
		if !ok {
			unlinkat(w.parent, tmp, 0)
		}
	}()
	data := req.Data
	for len(data) > 0 {
		n, err := syscall.Write(fd, data)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			syscall.Close(fd)
			return nil, errnoError(err, req.Path)
		}
		data = data[n:]
	}
	syscall.Fchmod(fd, mode)
	if fsUid, fsGid := fileIdentity(); uid >= 0 && (uid != fsUid || gid != fsGid) {
		// Kept as it was where we may (a root executor without --user); with --user the commands' files are its file-system uid's already.
		syscall.Fchown(fd, uid, gid)
	}
	if err := syscall.Close(fd); err != nil {
		return nil, errnoError(err, req.Path)
	}
	if req.Exclusive {
		// link(2) fails on an existing name: an exclusive create even when the name appeared since the walk.
		if err := linkat(w.parent, tmp, w.parent, w.name); err != nil {
			return nil, errnoError(err, req.Path)
		}
		unlinkat(w.parent, tmp, 0)
	} else if err := syscall.Renameat(w.parent, tmp, w.parent, w.name); err != nil {
		return nil, errnoError(err, req.Path)
	}
	ok = true
	return map[string]int{"size": len(req.Data)}, nil
}

type statResult struct {
	Type    string  `json:"type"`
	Size    int64   `json:"size"`
	Mode    uint32  `json:"mode"`
	MtimeMs float64 `json:"mtimeMs"`
}

func (s *server) stat(req request) (any, error) {
	parts, err := s.parts(req.Path)
	if err != nil {
		return nil, err
	}
	look := func(follow bool) (*syscall.Stat_t, error) {
		w, err := s.walk(req.Path, parts, follow, false)
		if err != nil {
			// Below a file: nothing there.
			if oe, ok := err.(*opError); ok && oe.code == "NOT_A_DIRECTORY" {
				return nil, nil
			}
			return nil, err
		}
		defer w.close()
		if w.target < 0 {
			return nil, nil
		}
		st := w.st
		return &st, nil
	}
	st, err := look(req.Follow)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fail("FILE_NOT_FOUND", "no such file: '%s'", req.Path)
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
		// Where a link leads must stay inside too, existing or not.
		if _, err := look(true); err != nil {
			return nil, err
		}
	}
	return statResult{
		Type:    kindOf(st.Mode),
		Size:    st.Size,
		Mode:    st.Mode & 0o7777,
		MtimeMs: float64(st.Mtim.Sec)*1000 + float64(st.Mtim.Nsec)/1e6,
	}, nil
}

type listEntry struct {
	Path string `json:"path"`
	Type string `json:"type"`
	Size int64  `json:"size"`
}

type listResult struct {
	Entries   []listEntry `json:"entries"`
	Truncated bool        `json:"truncated"`
}

// list walks breadth-first; links are listed, never followed.
func (s *server) list(req request) (any, error) {
	parts, err := s.parts(req.Path)
	if err != nil {
		return nil, err
	}
	depth := req.Depth
	if depth <= 0 {
		depth = 1
	}
	limit := req.Limit
	if limit <= 0 {
		limit = defaultListMax
	}
	limit = min(limit, listLimitCeil)
	skip := map[string]bool{}
	for _, n := range req.Skip {
		skip[n] = true
	}
	w, err := s.walk(req.Path, parts, true, false)
	if err != nil {
		return nil, err
	}
	if w.target < 0 {
		w.close()
		return nil, fail("FILE_NOT_FOUND", "no such file: '%s'", req.Path)
	}
	if w.st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		w.close()
		return nil, fail("NOT_A_DIRECTORY", "'%s' is not a directory", req.Path)
	}
	first, err := syscall.Openat(w.target, ".", openPathNoLinks|syscall.O_DIRECTORY, 0)
	w.close()
	if err != nil {
		return nil, errnoError(err, req.Path)
	}
	type item struct {
		rel string
		fd  int
	}
	queue := []item{{strings.Join(parts, "/"), first}}
	var next []item
	defer func() {
		for _, it := range append(queue, next...) {
			if it.fd >= 0 {
				syscall.Close(it.fd)
			}
		}
	}()
	res := listResult{Entries: []listEntry{}}
	for lvl := 0; lvl < depth && len(queue) > 0; lvl++ {
		next = nil
		for i := range queue {
			dir := queue[i]
			names := readDirNames(dir.fd)
			sort.Strings(names)
			for _, name := range names {
				if skip[name] {
					continue
				}
				if len(res.Entries) >= limit {
					res.Truncated = true
					return res, nil
				}
				rel := name
				if dir.rel != "" {
					rel = dir.rel + "/" + name
				}
				fd, err := syscall.Openat(dir.fd, name, openPathNoLinks, 0)
				if err != nil {
					continue
				}
				var st syscall.Stat_t
				if syscall.Fstat(fd, &st) != nil {
					syscall.Close(fd)
					continue
				}
				e := listEntry{Path: rel, Type: kindOf(st.Mode)}
				if e.Type == "file" {
					e.Size = st.Size
				}
				res.Entries = append(res.Entries, e)
				if e.Type == "dir" && lvl+1 < depth {
					next = append(next, item{rel, fd})
				} else {
					syscall.Close(fd)
				}
			}
			syscall.Close(dir.fd)
			queue[i].fd = -1
		}
		queue, next = next, nil
	}
	return res, nil
}

// readDirNames lists a directory held by an O_PATH descriptor (opened for reading through it).
func readDirNames(pathFd int) []string {
	fd, err := syscall.Openat(pathFd, ".", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	var names []string
	buf := make([]byte, 32<<10)
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err != nil || n <= 0 {
			return names
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
}

func (s *server) remove(req request) (any, error) {
	parts, err := s.parts(req.Path)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return nil, fail("INVALID_ARGUMENT", "refusing to remove the workspace root")
	}
	w, err := s.walk(req.Path, parts, false, false)
	if err != nil {
		return nil, err
	}
	defer w.close()
	if w.target < 0 || w.name == "" {
		return map[string]bool{"removed": false}, nil
	}
	if err := removeEntry(w.parent, w.name); err != nil {
		return nil, errnoError(err, req.Path)
	}
	return map[string]bool{"removed": true}, nil
}

// removeEntry removes a name and, for a directory, everything below it, each directory
// opened without following links: a directory swapped for a link meanwhile loses only the link.
func removeEntry(parent int, name string) error {
	for tries := 0; ; tries++ {
		dfd, err := syscall.Openat(parent, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err == syscall.ENOENT {
			return nil
		}
		if err == syscall.ENOTDIR || err == syscall.ELOOP {
			err := unlinkat(parent, name, 0)
			if err == nil || err == syscall.ENOENT {
				return nil
			}
			if (err == syscall.EISDIR || err == syscall.EPERM) && tries < 8 {
				continue
			}
			return err
		}
		if err != nil {
			return err
		}
		for _, child := range readDirNamesFd(dfd) {
			if err := removeEntry(dfd, child); err != nil {
				syscall.Close(dfd)
				return err
			}
		}
		syscall.Close(dfd)
		err = unlinkat(parent, name, atRemoveDir)
		if err == nil || err == syscall.ENOENT {
			return nil
		}
		if (err == syscall.ENOTDIR || err == syscall.ENOTEMPTY || err == syscall.EEXIST) && tries < 8 {
			continue
		}
		return err
	}
}

func readDirNamesFd(fd int) []string {
	var names []string
	buf := make([]byte, 32<<10)
	syscall.Seek(fd, 0, 0)
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err != nil || n <= 0 {
			return names
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
}

func unlinkat(dir int, name string, flags int) error {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	_, _, e := syscall.Syscall(syscall.SYS_UNLINKAT, uintptr(dir), uintptr(unsafe.Pointer(p)), uintptr(flags))
	if e != 0 {
		return e
	}
	return nil
}

func linkat(oldDir int, oldName string, newDir int, newName string) error {
	o, err := syscall.BytePtrFromString(oldName)
	if err != nil {
		return err
	}
	n, err := syscall.BytePtrFromString(newName)
	if err != nil {
		return err
	}
	_, _, e := syscall.Syscall6(syscall.SYS_LINKAT, uintptr(oldDir), uintptr(unsafe.Pointer(o)), uintptr(newDir), uintptr(unsafe.Pointer(n)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
