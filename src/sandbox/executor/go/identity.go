package main

// How the executor keeps out of its commands' reach. Commands run as the same uid as anything
// else they can signal (kill -9 -1), trace or prlimit; the executor must be neither:
//
//   --user UID:GID    (a root executor) commands run as UID:GID; the executor keeps real, effective
//                     and saved uid 0 and only CAP_SETUID and CAP_SETGID, its file operations and
//                     /proc reads run with file-system uid and gid UID:GID (files stay the
//                     commands'), and it signals its commands with UID as its effective uid on one
//                     thread for the moment of the kill (no CAP_KILL).
//   --pid-namespace   (an unprivileged executor, one uid) each command in a user and pid namespace
//                     of its own under a small init: the executor is in none of them, so no pid
//                     there names it.

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

const (
	capSetgid         = 6
	capSetuid         = 7
	capVersion3       = 0x20080522
	sysSetfsuid       = syscall.SYS_SETFSUID
	sysSetfsgid       = syscall.SYS_SETFSGID
	keepUnchanged     = ^uintptr(0) // -1: setresuid leaves that id as it is
	commandUserCapMsk = 1<<capSetuid | 1<<capSetgid
)

// identity is a uid and gid pair.
type identity struct {
	uid, gid int
}

// commandUser is who commands run as when the executor runs as root (--user); nil otherwise.
// Set once in main, before any command.
var commandUser *identity

// pidNamespaces is true when each command gets a user and pid namespace of its own
// (--pid-namespace), under selfBinary --init.
var (
	pidNamespaces bool
	selfBinary    string
)

// commandUid is the uid commands run as.
func commandUid() int {
	if commandUser != nil {
		return commandUser.uid
	}
	return syscall.Getuid()
}

// fileIdentity is who the executor's file operations act as: the commands' uid and gid with
// --user, else its own effective ones.
func fileIdentity() (int, int) {
	if commandUser != nil {
		return commandUser.uid, commandUser.gid
	}
	return syscall.Geteuid(), syscall.Getegid()
}

// isolationMode names how the executor is kept from its commands: "uid", "pid-namespace" or "none".
func isolationMode() string {
	switch {
	case commandUser != nil:
		return "uid"
	case pidNamespaces:
		return "pid-namespace"
	}
	return "none"
}

func parseIdentity(s string) (identity, error) {
	u, g, ok := strings.Cut(s, ":")
	uid, err1 := strconv.Atoi(u)
	gid, err2 := strconv.Atoi(g)
	if !ok || err1 != nil || err2 != nil || uid <= 0 || gid <= 0 {
		return identity{}, fmt.Errorf("--user wants UID:GID, both above 0 (got %q)", s)
	}
	return identity{uid, gid}, nil
}

type capHeader struct {
	version uint32
	pid     int32
}

type capData struct {
	effective, permitted, inheritable uint32
}

// setCaps sets every thread's effective and permitted capabilities to mask (the low 32 caps), none inheritable.
func setCaps(mask uint32) error {
	hdr := capHeader{version: capVersion3}
	data := [2]capData{{effective: mask, permitted: mask}}
	if _, _, e := syscall.AllThreadsSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return e
	}
	return nil
}

// effectiveCaps is the calling thread's effective set (low 32 caps).
func effectiveCaps() uint32 {
	hdr := capHeader{version: capVersion3}
	var data [2]capData
	syscall.RawSyscall(syscall.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	return data[0].effective
}

// becomeCommandFiles makes a root executor act on files as the commands' uid and gid: no
// capability but CAP_SETUID and CAP_SETGID (to start commands as them), no supplementary
// groups, and file-system ids u on every thread (threads made later inherit them).
func becomeCommandFiles(u identity) error {
	if syscall.Geteuid() != 0 {
		return fmt.Errorf("--user needs the executor to start as root (it runs as uid %d)", syscall.Geteuid())
	}
	if effectiveCaps()&commandUserCapMsk != commandUserCapMsk {
		return fmt.Errorf("--user needs CAP_SETUID and CAP_SETGID (the sandbox dropped them)")
	}
	if err := setCaps(commandUserCapMsk); err != nil {
		return fmt.Errorf("dropping capabilities: %v", err)
	}
	if err := syscall.Setgroups([]int{}); err != nil {
		return fmt.Errorf("clearing supplementary groups: %v", err)
	}
	// setfsuid returns the previous id, never an error: checked below by reading it back.
	syscall.AllThreadsSyscall(sysSetfsgid, uintptr(u.gid), 0, 0)
	syscall.AllThreadsSyscall(sysSetfsuid, uintptr(u.uid), 0, 0)
	if fsuid, _, _ := syscall.RawSyscall(sysSetfsuid, keepUnchanged, 0, 0); int(fsuid) != u.uid {
		return fmt.Errorf("the file-system uid is %d, not %d", fsuid, u.uid)
	}
	// The first LockOSThread starts the runtime's template thread: now, while the sandbox's pids
	// budget is free, not at the first kill, when a fork bomb may have spent it (fatal then).
	runtime.LockOSThread()
	runtime.UnlockOSThread()
	return nil
}

// asCommandUser runs f (signals to commands) with the commands' uid as this thread's effective
// uid: without CAP_KILL a process signals only processes whose real or saved uid is its real or
// effective one. Real and saved uid stay 0, so no command can signal the executor meanwhile.
func asCommandUser(f func()) {
	u := commandUser
	if u == nil {
		f()
		return
	}
	runtime.LockOSThread()
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, keepUnchanged, uintptr(u.uid), keepUnchanged); e != 0 {
		runtime.UnlockOSThread()
		return
	}
	f()
	// Back to effective uid 0 (its saved uid: no capability needed; the permitted set comes back
	// as the effective one), then the file-system uid the change reset.
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, keepUnchanged, 0, keepUnchanged); e != 0 {
		// A thread stuck as another uid must not serve anyone else: it ends with this goroutine.
		return
	}
	syscall.RawSyscall(sysSetfsuid, uintptr(u.uid), 0, 0)
	runtime.UnlockOSThread()
}
