// Command benchgym-executor lives inside a sandbox for an episode's lifetime and runs
// commands and file operations for the host over its own stdin and stdout: JSON lines,
// several requests in flight, each with an id (protocol.ts describes the frames).
//
// Go, because CGO_ENABLED=0 gives one static binary that runs in every image as it is:
// no interpreter, no libc, nothing downloaded inside the sandbox.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// version is the hash of the source it was built from (-ldflags -X main.version=...).
var version = "dev"

const protocolVersion = 1

// sysCloseRange is close_range(2), the same number on amd64 and arm64.
const sysCloseRange = 436

// maxFrameBytes bounds one request line (a file written is base64 inside it).
const maxFrameBytes = 96 << 20

func main() {
	root := flag.String("root", "", "the workspace root: every file path is confined to it")
	user := flag.String("user", "", "UID:GID that commands and file operations run as, for an executor started as root (identity.go)")
	pidns := flag.Bool("pid-namespace", false, "each command in a user and pid namespace of its own (identity.go)")
	probe := flag.Bool("probe-pid-namespace", false, "exit 0 when commands can have a pid namespace of their own, else 1")
	initMode := flag.Bool("init", false, "internal: the init of one command's pid namespace (init.go): --init -- PATH ARGV0 ARGS...")
	drainMs := flag.Int("drain-ms", int(drainGrace/time.Millisecond), "with --init: how long what the command left may run on after it")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *initMode {
		runInit(flag.Args(), time.Duration(*drainMs)*time.Millisecond)
		return
	}
	if *showVersion {
		fmt.Printf("benchgym-executor %s (protocol %d)\n", version, protocolVersion)
		return
	}
	if *probe {
		if err := probePidNamespace(); err != nil {
			fmt.Fprintf(os.Stderr, "benchgym-executor: no pid namespace for commands: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if *root == "" {
		fmt.Fprintln(os.Stderr, "benchgym-executor: --root is required")
		os.Exit(2)
	}
	if *user != "" && *pidns {
		fmt.Fprintln(os.Stderr, "benchgym-executor: --user and --pid-namespace are two ways to the same end; give one")
		os.Exit(2)
	}
	closeInherited()
	if *user != "" {
		u, err := parseIdentity(*user)
		if err == nil {
			err = becomeCommandFiles(u)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchgym-executor: %v\n", err)
			os.Exit(1)
		}
		commandUser = &u
	}
	if *pidns {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchgym-executor: --pid-namespace: cannot find its own binary: %v\n", err)
			os.Exit(1)
		}
		pidNamespaces, selfBinary = true, self
	}
	in, out, err := takeChannel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchgym-executor: %v\n", err)
		os.Exit(1)
	}
	// Not dumpable: a process of the same uid cannot open /proc/<pid>/fd/* (our channel) or ptrace us.
	// With pid namespaces the commands' user namespaces guard that instead: the executor must open
	// each new command's uid_map, which a non-dumpable parent's child leaves to root until it execs.
	if !pidNamespaces {
		syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0)
	}
	prewarmThreads(24)
	s, err := newServer(*root, out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchgym-executor: %v\n", err)
		os.Exit(1)
	}
	s.serve(in)
}

// closeInherited marks every descriptor past 2 close-on-exec: whatever our parent leaked
// to us (a pipe, a socket) never reaches a command.
func closeInherited() {
	const closeRangeCloexec = 4
	if _, _, e := syscall.Syscall(sysCloseRange, 3, ^uintptr(0)>>1, closeRangeCloexec); e == 0 {
		return
	}
	// Before Linux 5.11: one by one.
	names, _ := os.ReadDir("/proc/self/fd")
	for _, n := range names {
		if fd, err := strconv.Atoi(n.Name()); err == nil && fd > 2 {
			syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFD, syscall.FD_CLOEXEC)
		}
	}
}

// takeChannel moves stdin and stdout to close-on-exec descriptors and puts /dev/null on 0
// and 1, so nothing started from here can inherit the channel, even by mistake.
func takeChannel() (*os.File, *os.File, error) {
	dup := func(fd int) (int, error) {
		r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 3)
		if e != 0 {
			return -1, fmt.Errorf("dup of fd %d: %v", fd, e)
		}
		return int(r), nil
	}
	inFd, err := dup(0)
	if err != nil {
		return nil, nil, err
	}
	outFd, err := dup(1)
	if err != nil {
		return nil, nil, err
	}
	if null, err := syscall.Open("/dev/null", syscall.O_RDWR|syscall.O_CLOEXEC, 0); err == nil {
		syscall.Dup3(null, 0, 0)
		syscall.Dup3(null, 1, 0)
		syscall.Close(null)
	}
	return os.NewFile(uintptr(inFd), "channel-in"), os.NewFile(uintptr(outFd), "channel-out"), nil
}

type server struct {
	root     string
	realRoot string
	rootFd   int
	baseEnv  []string
	// nonce makes exec markers unique to this executor.
	nonce string

	out     chan []byte
	flushed chan struct{}

	mu    sync.Mutex
	execs map[uint64]*execution
	wg    sync.WaitGroup
}

func newServer(root string, out *os.File) (*server, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("the workspace root %s: %v", abs, err)
	}
	fd, err := syscall.Open(real, oPath|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the workspace root %s cannot be opened: %v", real, err)
	}
	s := &server{
		root:     abs,
		realRoot: real,
		rootFd:   fd,
		baseEnv:  os.Environ(),
		nonce:    randomHex(6),
		out:      make(chan []byte, 256),
		flushed:  make(chan struct{}),
		execs:    map[uint64]*execution{},
	}
	go s.writeLoop(out)
	return s, nil
}

// errorBody is what every failure sends back: a string code callers switch on.
type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type opError struct {
	code string
	msg  string
}

func (e *opError) Error() string { return e.code + ": " + e.msg }

func fail(code, format string, args ...any) *opError {
	return &opError{code: code, msg: fmt.Sprintf(format, args...)}
}

type responseFrame struct {
	ID     *uint64    `json:"id"`
	OK     bool       `json:"ok"`
	Result any        `json:"result,omitempty"`
	Error  *errorBody `json:"error,omitempty"`
}

type outputFrame struct {
	ID     uint64 `json:"id"`
	Event  string `json:"event"`
	Stream string `json:"stream"`
	Data   []byte `json:"data"`
}

func (s *server) send(frame any) {
	b, err := json.Marshal(frame)
	if err != nil {
		b, _ = json.Marshal(responseFrame{Error: &errorBody{Code: "INTERNAL", Message: err.Error()}})
	}
	s.out <- append(b, '\n')
}

func (s *server) reply(id *uint64, result any, err error) {
	if err == nil {
		s.send(responseFrame{ID: id, OK: true, Result: result})
		return
	}
	var oe *opError
	if !errors.As(err, &oe) {
		oe = fail("IO_ERROR", "%v", err)
	}
	s.send(responseFrame{ID: id, Error: &errorBody{Code: oe.code, Message: oe.msg}})
}

// writeLoop is the only writer of the channel; frames are flushed as soon as none wait.
func (s *server) writeLoop(w *os.File) {
	bw := bufio.NewWriterSize(w, 64<<10)
	for frame := range s.out {
		if frame == nil {
			bw.Flush()
			close(s.flushed)
			return
		}
		_, err := bw.Write(frame)
		if err == nil && len(s.out) == 0 {
			err = bw.Flush()
		}
		if err != nil {
			// The host is gone: nothing may outlive the channel.
			s.killAll()
			os.Exit(1)
		}
	}
}

func (s *server) serve(in io.Reader) {
	br := bufio.NewReaderSize(in, 256<<10)
	for {
		line, tooLong, err := readLine(br)
		if tooLong {
			s.send(responseFrame{Error: &errorBody{Code: "BAD_FRAME", Message: fmt.Sprintf("a frame is larger than %d bytes", maxFrameBytes)}})
		} else if len(bytes.TrimSpace(line)) > 0 {
			s.dispatch(line)
		}
		if err != nil {
			break
		}
	}
	// The host closed the channel: end every command, answer what is left, and go.
	s.killAll()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	s.out <- nil
	<-s.flushed
}

// readLine reads one line of at most maxFrameBytes; a longer one is skipped to its end.
func readLine(br *bufio.Reader) ([]byte, bool, error) {
	var buf []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > maxFrameBytes {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return buf, tooLong, err
	}
}

// request holds the fields of every op; each op reads its own.
type request struct {
	ID *uint64 `json:"id"`
	Op string  `json:"op"`

	Argv             []string          `json:"argv"`
	Command          *string           `json:"command"`
	Cwd              string            `json:"cwd"`
	Env              map[string]string `json:"env"`
	ClearEnv         bool              `json:"clearEnv"`
	Stdin            []byte            `json:"stdin"`
	TimeoutMs        int64             `json:"timeoutMs"`
	GraceMs          *int64            `json:"graceMs"`
	MaxOutputBytes   *int64            `json:"maxOutputBytes"`
	Stream           bool              `json:"stream"`
	StreamLimitBytes *int64            `json:"streamLimitBytes"`

	Target *uint64 `json:"target"`
	Signal string  `json:"signal"`

	Path      string   `json:"path"`
	MaxBytes  *int64   `json:"maxBytes"`
	Data      []byte   `json:"data"`
	Mode      *uint32  `json:"mode"`
	Exclusive bool     `json:"exclusive"`
	Follow    bool     `json:"follow"`
	Depth     int      `json:"depth"`
	Limit     int      `json:"limit"`
	Skip      []string `json:"skip"`
}

func (s *server) dispatch(line []byte) {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		// The id, if one can be read, so the caller is answered rather than left waiting.
		var idOnly struct {
			ID *uint64 `json:"id"`
		}
		json.Unmarshal(line, &idOnly)
		s.send(responseFrame{ID: idOnly.ID, Error: &errorBody{Code: "BAD_FRAME", Message: "not a valid request: " + err.Error()}})
		return
	}
	if req.ID == nil {
		s.send(responseFrame{Error: &errorBody{Code: "BAD_FRAME", Message: "a request needs a numeric 'id'"}})
		return
	}
	switch req.Op {
	case "ping":
		s.reply(req.ID, map[string]any{
			"protocol": protocolVersion, "version": version, "pid": os.Getpid(), "root": s.root,
			"uid": os.Getuid(), "commandUid": commandUid(), "isolation": isolationMode(),
		}, nil)
		return
	case "cancel", "signal":
		result, err := s.signalExec(req)
		s.reply(req.ID, result, err)
		return
	case "exec", "read", "write", "stat", "list", "remove":
	default:
		s.reply(req.ID, nil, fail("BAD_FRAME", "unknown op %q", req.Op))
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var result any
		var err error
		switch req.Op {
		case "exec":
			result, err = s.exec(req)
		case "read":
			result, err = s.read(req)
		case "write":
			result, err = s.write(req)
		case "stat":
			result, err = s.stat(req)
		case "list":
			result, err = s.list(req)
		case "remove":
			result, err = s.remove(req)
		}
		s.reply(req.ID, result, err)
	}()
}

// prewarmThreads makes the runtime start n OS threads now, while the sandbox's pids budget is
// free: a fork bomb in the sandbox may exhaust it later, and the Go runtime aborts the whole
// process when it cannot create a thread it needs. Threads, once made, are kept for reuse.
func prewarmThreads(n int) {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A blocking system call: the scheduler hands its P to another thread meanwhile.
			ts := syscall.Timespec{Nsec: 10_000_000}
			syscall.Nanosleep(&ts, nil)
		}()
	}
	wg.Wait()
}
