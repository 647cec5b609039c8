package main

// The init of a command's own pid namespace (--pid-namespace): PID 1 there, with the command as
// its one child, so the command keeps the signal semantics of an ordinary process (PID 1 gets
// only signals it handles) and orphans are reaped. When the command exits, the init writes its
// wait status to the executor (fd 3), gives what the command left behind up to the drain time
// to finish (the executor reads their output meanwhile), and exits; the kernel then kills
// whatever is left in the namespace.

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// initStatusFd is where the executor reads the command's wait status (an ExtraFiles pipe).
const initStatusFd = 3

// nsFlags are the namespaces each command gets: a user namespace (the executor has no
// capability of its own) owning a pid namespace.
const nsFlags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID

// runInit runs args[1:] as the command, args[0] its resolved path.
func runInit(args []string, drain time.Duration) {
	syscall.CloseOnExec(initStatusFd)
	status := os.NewFile(initStatusFd, "status")
	// The executor signals the command's whole group, this init included: the runtime's own
	// handlers would end it (and the namespace with it) at a SIGTERM. Caught and dropped, the
	// command alone decides what a signal does to it.
	sink := make(chan os.Signal, 16)
	signal.Notify(sink, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM,
		syscall.SIGPIPE, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGXCPU, syscall.SIGXFSZ, syscall.SIGVTALRM, syscall.SIGWINCH)
	go func() {
		for range sink {
		}
	}()
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "benchgym-executor --init: no command")
		os.Exit(2)
	}
	cmd := &exec.Cmd{Path: args[0], Args: args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "benchgym: could not start %s: %v\n", args[1], err)
		os.Exit(127)
	}
	child := cmd.Process.Pid
	var childStatus syscall.WaitStatus
	childExited := false
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			break // ECHILD: nothing is left
		}
		if pid == child {
			childStatus, childExited = ws, true
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], uint32(ws))
			status.Write(b[:])
			status.Close()
			go func() {
				time.Sleep(drain)
				exitLike(ws)
			}()
		}
	}
	if !childExited {
		os.Exit(1)
	}
	exitLike(childStatus)
}

// exitLike ends the init with the command's exit code (a signal as 128 + its number: the
// executor takes the real status from the status pipe).
func exitLike(ws syscall.WaitStatus) {
	if ws.Signaled() {
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(ws.ExitStatus())
}

// probePidNamespace says whether this process may give a command its own user and pid namespace.
func probePidNamespace() error {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	cmd.SysProcAttr = nsAttr(syscall.Getuid(), syscall.Getgid())
	return cmd.Run()
}

// nsAttr maps the executor's own uid and gid (the only ones an unprivileged process may map).
func nsAttr(uid, gid int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Cloneflags:  nsFlags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
	}
}
