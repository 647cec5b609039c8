package main

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const (
	defaultOutputBytes = 1 << 20
	defaultStreamBytes = 8 << 20
	defaultGrace       = 500 * time.Millisecond
	// Background processes holding the pipes get this long after the command exits.
	drainGrace   = 300 * time.Millisecond
	drainGiveUp  = 5 * time.Second
	readChunk    = 64 << 10
	markerName   = "BENCHGYM_EXEC"
	defaultPath  = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	waitNoWait   = 0x1000000 // WNOWAIT: leave the child a zombie, so its pid and group number stay ours
	waitExitedFl = 4         // WEXITED
	pPID         = 1         // P_PID
)

// execution is one running command: its process group and the marker its processes inherit.
type execution struct {
	pid       int
	marker    string
	grace     time.Duration
	cancelled atomic.Bool
	timedOut  atomic.Bool

	mu         sync.Mutex
	reaped     bool
	graceTimer *time.Timer
}

// signalGroup signals the command's process group while its leader is unreaped: until
// then no other group can hold that number.
func (x *execution) signalGroup(sig syscall.Signal) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.reaped {
		asCommandUser(func() { syscall.Kill(-x.pid, sig) })
	}
}

// kill ends the group and what left it with setsid() (found by the inherited marker).
func (x *execution) kill() {
	x.signalGroup(syscall.SIGKILL)
	asCommandUser(func() { killMarked(x.marker, syscall.SIGKILL, x.pid) })
}

// terminate asks politely, then kills after the grace.
func (x *execution) terminate() {
	x.signalGroup(syscall.SIGTERM)
	asCommandUser(func() { killMarked(x.marker, syscall.SIGTERM, x.pid) })
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.graceTimer == nil && !x.reaped {
		x.graceTimer = time.AfterFunc(x.grace, x.kill)
	}
}

// capped keeps the first and last limit/2 bytes of a stream while counting everything.
type capped struct {
	headLimit, tailLimit int
	head, tail           []byte
	total                int64
}

func newCapped(limit int64) *capped {
	return &capped{headLimit: int((limit + 1) / 2), tailLimit: int(limit / 2)}
}

func (c *capped) push(b []byte) {
	c.total += int64(len(b))
	if len(c.head) < c.headLimit {
		take := min(len(b), c.headLimit-len(c.head))
		c.head = append(c.head, b[:take]...)
		b = b[take:]
	}
	if len(b) == 0 || c.tailLimit == 0 {
		return
	}
	if len(b) >= c.tailLimit {
		c.tail = append(c.tail[:0], b[len(b)-c.tailLimit:]...)
		return
	}
	c.tail = append(c.tail, b...)
	// Compacted only when twice the limit: each byte is copied a bounded number of times.
	if len(c.tail) >= 2*c.tailLimit {
		n := copy(c.tail, c.tail[len(c.tail)-c.tailLimit:])
		c.tail = c.tail[:n]
	}
}

type streamResult struct {
	Head  []byte `json:"head"`
	Tail  []byte `json:"tail"`
	Total int64  `json:"total"`
}

func (c *capped) result() streamResult {
	tail := c.tail
	if len(tail) > c.tailLimit {
		tail = tail[len(tail)-c.tailLimit:]
	}
	return streamResult{Head: c.head, Tail: tail, Total: c.total}
}

type execResult struct {
	ExitCode   *int         `json:"exitCode"`
	Signal     *string      `json:"signal"`
	TimedOut   bool         `json:"timedOut"`
	Cancelled  bool         `json:"cancelled"`
	DurationMs float64      `json:"durationMs"`
	Stdout     streamResult `json:"stdout"`
	Stderr     streamResult `json:"stderr"`
}

func (s *server) exec(req request) (any, error) {
	var argv []string
	switch {
	case req.Command != nil:
		argv = []string{"/bin/sh", "-c", *req.Command}
	case len(req.Argv) > 0:
		argv = req.Argv
	default:
		return nil, fail("INVALID_ARGUMENT", "exec needs 'command' or a non-empty 'argv'")
	}
	cwd := s.realRoot
	if req.Cwd != "" && req.Cwd != "." {
		dir, err := s.directory(req.Cwd)
		if err != nil {
			return nil, err
		}
		cwd = dir
	}
	marker := s.nonce + "-" + strconv.FormatUint(*req.ID, 10)
	env := s.environment(req, marker)
	file := argv[0]
	if !strings.Contains(file, "/") {
		found, ok := lookPath(file, env)
		if !ok {
			return nil, fail("EXEC_FAILED", "%s: command not found in PATH", file)
		}
		file = found
	}
	limit := int64(defaultOutputBytes)
	if req.MaxOutputBytes != nil && *req.MaxOutputBytes >= 0 {
		limit = *req.MaxOutputBytes
	}
	streamLimit := int64(defaultStreamBytes)
	if req.StreamLimitBytes != nil && *req.StreamLimitBytes >= 0 {
		streamLimit = *req.StreamLimitBytes
	}
	grace := defaultGrace
	if req.GraceMs != nil && *req.GraceMs >= 0 {
		grace = time.Duration(*req.GraceMs) * time.Millisecond
	}

	// os.Pipe descriptors are close-on-exec; exec.Cmd dup2s them onto the child's 1 and 2 only.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fail("EXEC_FAILED", "pipe: %v", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fail("EXEC_FAILED", "pipe: %v", err)
	}
	cmd := &exec.Cmd{
		Path:   file,
		Args:   argv,
		Dir:    cwd,
		Env:    env,
		Stdout: outW,
		Stderr: errW,
		// Setpgid: one group to signal; Pdeathsig: the leader does not outlive a killed executor.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	}
	if u := commandUser; u != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.gid), Groups: []uint32{}}
	}
	// With pid namespaces the leader is an init of the command's own (init.go); it tells the command's status on statusR.
	var statusR *os.File
	if pidNamespaces {
		r, w, err := os.Pipe()
		if err != nil {
			outR.Close()
			errR.Close()
			return nil, fail("EXEC_FAILED", "pipe: %v", err)
		}
		defer r.Close()
		defer w.Close()
		statusR = r
		cmd.Path = selfBinary
		cmd.Args = append([]string{selfBinary, "--init", "--drain-ms", strconv.FormatInt(drainGrace.Milliseconds(), 10), "--", file}, argv...)
		cmd.ExtraFiles = []*os.File{w}
		ns := nsAttr(os.Getuid(), os.Getgid())
		cmd.SysProcAttr.Cloneflags, cmd.SysProcAttr.UidMappings, cmd.SysProcAttr.GidMappings = ns.Cloneflags, ns.UidMappings, ns.GidMappings
	}
	// No stdin given: exec.Cmd opens /dev/null, never our channel.
	var inW *os.File
	if req.Stdin != nil {
		inR, w, err := os.Pipe()
		if err != nil {
			return nil, fail("EXEC_FAILED", "pipe: %v", err)
		}
		defer inR.Close()
		cmd.Stdin, inW = inR, w
	}
	started := time.Now()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	if err != nil {
		outR.Close()
		errR.Close()
		if inW != nil {
			inW.Close()
		}
		return nil, fail("EXEC_FAILED", "could not start %s: %v", argv[0], err)
	}
	if cmd.Stdin != nil {
		cmd.Stdin.(*os.File).Close()
	}
	x := &execution{pid: cmd.Process.Pid, marker: marker, grace: grace}
	s.mu.Lock()
	s.execs[*req.ID] = x
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.execs, *req.ID)
		s.mu.Unlock()
	}()
	if inW != nil {
		go func() {
			inW.Write(req.Stdin)
			inW.Close()
		}()
	}

	stdout, stderr := newCapped(limit), newCapped(limit)
	var readers sync.WaitGroup
	read := func(r *os.File, c *capped, name string) {
		defer readers.Done()
		var streamed int64
		buf := make([]byte, readChunk)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				c.push(buf[:n])
				if req.Stream && streamed < streamLimit {
					chunk := buf[:min(int64(n), streamLimit-streamed)]
					streamed += int64(len(chunk))
					s.send(outputFrame{ID: *req.ID, Event: "output", Stream: name, Data: bytes.Clone(chunk)})
				}
			}
			if err != nil {
				return
			}
		}
	}
	readers.Add(2)
	go read(outR, stdout, "stdout")
	go read(errR, stderr, "stderr")
	if req.TimeoutMs > 0 {
		t := time.AfterFunc(time.Duration(req.TimeoutMs)*time.Millisecond, func() {
			x.timedOut.Store(true)
			x.terminate()
		})
		defer t.Stop()
	}

	waitExited(x.pid)
	drained := make(chan struct{})
	go func() {
		readers.Wait()
		close(drained)
	}()
	select {
	case <-drained:
	case <-time.After(drainGrace):
		// Killing the writers closes the pipes after what they wrote is read: no output is lost.
		x.kill()
		select {
		case <-drained:
		case <-time.After(drainGiveUp):
			outR.Close()
			errR.Close()
			<-drained
		}
	}
	// Nothing a command started outlives it.
	x.kill()
	x.mu.Lock()
	x.reaped = true
	if x.graceTimer != nil {
		x.graceTimer.Stop()
	}
	x.mu.Unlock()
	cmd.Wait()
	outR.Close()
	errR.Close()

	res := execResult{
		TimedOut:   x.timedOut.Load(),
		Cancelled:  x.cancelled.Load(),
		DurationMs: float64(time.Since(started).Microseconds()) / 1000,
		Stdout:     stdout.result(),
		Stderr:     stderr.result(),
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if statusR != nil {
		// The command's own status, when its init lived to tell it (else the init's: killed).
		var b [4]byte
		if n, _ := io.ReadFull(statusR, b[:]); n == 4 {
			ws = syscall.WaitStatus(binary.LittleEndian.Uint32(b[:]))
		}
	}
	if ws.Signaled() {
		name := signalName(ws.Signal())
		res.Signal = &name
	} else {
		code := ws.ExitStatus()
		res.ExitCode = &code
	}
	return res, nil
}

// waitExited blocks until the process has exited, without reaping it.
func waitExited(pid int) {
	var info [128]byte
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info[0])), waitExitedFl|waitNoWait, 0, 0)
		if e != syscall.EINTR {
			return
		}
	}
}

func (s *server) environment(req request, marker string) []string {
	vars := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := vars[k]; !ok {
			order = append(order, k)
		}
		vars[k] = v
	}
	if !req.ClearEnv {
		for _, kv := range s.baseEnv {
			if k, v, ok := strings.Cut(kv, "="); ok {
				set(k, v)
			}
		}
	}
	for k, v := range req.Env {
		if k != "" && !strings.ContainsAny(k, "=\x00") && !strings.Contains(v, "\x00") {
			set(k, v)
		}
	}
	if _, ok := vars["PATH"]; !ok {
		set("PATH", defaultPath)
	}
	set(markerName, marker)
	env := make([]string, 0, len(order))
	for _, k := range order {
		env = append(env, k+"="+vars[k])
	}
	return env
}

// lookPath searches the command's PATH (not ours) for an executable.
func lookPath(file string, env []string) (string, bool) {
	path := defaultPath
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			path = kv[5:]
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// killMarked signals every process whose environment carries this exec's marker. They were
// all forked after the leader: unless pid numbers wrapped since, none has a smaller pid, so
// the rest of the machine's processes are not read (a host executor sees them all).
func killMarked(marker string, sig syscall.Signal, leader int) {
	needle := []byte(markerName + "=" + marker + "\x00")
	dir, err := os.Open("/proc")
	if err != nil {
		return
	}
	names, _ := dir.Readdirnames(-1)
	dir.Close()
	self := os.Getpid()
	from := 0
	if last := lastPid(); last >= leader {
		from = leader
	}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self || pid < from {
			continue
		}
		if data, err := os.ReadFile("/proc/" + name + "/environ"); err == nil && bytes.Contains(data, needle) {
			syscall.Kill(pid, sig)
		}
	}
}

// lastPid is the last pid handed out in our pid namespace, 0 when unknown.
func lastPid() int {
	b, err := os.ReadFile("/proc/sys/kernel/ns_last_pid")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

func (s *server) signalExec(req request) (any, error) {
	if req.Target == nil {
		return nil, fail("INVALID_ARGUMENT", "%s needs the 'target' request id", req.Op)
	}
	sig, known := signalsByName[req.Signal]
	if req.Op == "signal" && !known {
		return nil, fail("INVALID_ARGUMENT", "unknown signal %q", req.Signal)
	}
	s.mu.Lock()
	x := s.execs[*req.Target]
	s.mu.Unlock()
	if x == nil {
		// Finished already (or never ran): nothing to do.
		return map[string]bool{"found": false}, nil
	}
	if req.Op == "cancel" {
		x.cancelled.Store(true)
		x.terminate()
	} else {
		x.signalGroup(sig)
	}
	return map[string]bool{"found": true}, nil
}

// killAll ends every running command (the channel is closing).
func (s *server) killAll() {
	s.mu.Lock()
	running := make([]*execution, 0, len(s.execs))
	for _, x := range s.execs {
		running = append(running, x)
	}
	s.mu.Unlock()
	for _, x := range running {
		x.cancelled.Store(true)
		x.kill()
	}
}

var signalsByName = map[string]syscall.Signal{
	"SIGHUP": syscall.SIGHUP, "SIGINT": syscall.SIGINT, "SIGQUIT": syscall.SIGQUIT, "SIGILL": syscall.SIGILL,
	"SIGTRAP": syscall.SIGTRAP, "SIGABRT": syscall.SIGABRT, "SIGBUS": syscall.SIGBUS, "SIGFPE": syscall.SIGFPE,
	"SIGKILL": syscall.SIGKILL, "SIGUSR1": syscall.SIGUSR1, "SIGSEGV": syscall.SIGSEGV, "SIGUSR2": syscall.SIGUSR2,
	"SIGPIPE": syscall.SIGPIPE, "SIGALRM": syscall.SIGALRM, "SIGTERM": syscall.SIGTERM, "SIGCHLD": syscall.SIGCHLD,
	"SIGCONT": syscall.SIGCONT, "SIGSTOP": syscall.SIGSTOP, "SIGTSTP": syscall.SIGTSTP, "SIGTTIN": syscall.SIGTTIN,
	"SIGTTOU": syscall.SIGTTOU, "SIGURG": syscall.SIGURG, "SIGXCPU": syscall.SIGXCPU, "SIGXFSZ": syscall.SIGXFSZ,
	"SIGVTALRM": syscall.SIGVTALRM, "SIGPROF": syscall.SIGPROF, "SIGWINCH": syscall.SIGWINCH, "SIGSYS": syscall.SIGSYS,
}

func signalName(sig syscall.Signal) string {
	for name, s := range signalsByName {
		if s == sig {
			return name
		}
	}
	return "SIG" + strconv.Itoa(int(sig))
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
