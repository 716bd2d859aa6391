//go:build linux

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// On Linux a job's command runs under a guard: this same binary, started
// as `skiplock <guardArg> CMD`, leader of the command's process group. The
// guard holds one end of a socket whose other end only the worker holds;
// when the worker dies, however it dies (kill -9 too), the kernel closes
// that end and the guard kills the whole group, the command's children
// included, so that no command outlives its worker to overlap with the
// job's next attempt elsewhere. The guard reports the command's wait
// status back over the socket.

// guardArg is the hidden first argument that makes the binary a guard.
const guardArg = "__skiplock-worker-guard"

// guardFD is the guard's end of the socket (the first of ExtraFiles).
const guardFD = 3

// startCommand starts `sh -c command` under a guard.
func startCommand(command string, env []string, stdin io.Reader, stdout, stderr io.Writer) (*jobCommand, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket to the command's guard: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "guard"), os.NewFile(uintptr(fds[1]), "worker")
	defer theirs.Close() // the guard has its copy; the worker keeps only its own end
	// /proc/self/exe is this binary even when its file was replaced since.
	cmd := exec.Command("/proc/self/exe", guardArg, command)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, stdin, stdout, stderr
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = ours.Close()
		return nil, fmt.Errorf("start the command's guard: %w", err)
	}
	wait := func() error {
		defer ours.Close()
		err := cmd.Wait()
		status, _ := io.ReadAll(io.LimitReader(ours, 64))
		return guardedExit(err, status)
	}
	return &jobCommand{pgid: cmd.Process.Pid, wait: wait}, nil
}

// guardedExit answers how the command ended from the guard's end (err)
// and the status it reported: a guard that ended otherwise (killed with
// its group, or unable to start sh) speaks for the command.
func guardedExit(err error, status []byte) error {
	if err != nil {
		return err
	}
	n, perr := strconv.ParseUint(strings.TrimSpace(string(status)), 10, 32)
	if perr != nil {
		return errors.New("the command's guard ended without the command's status")
	}
	ws := syscall.WaitStatus(n)
	if ws.Exited() && ws.ExitStatus() == 0 {
		return nil
	}
	return commandExit{ws}
}

// commandExit is a command's end other than exit 0, worded as os/exec
// words it.
type commandExit struct{ ws syscall.WaitStatus }

func (e commandExit) Error() string {
	if e.ws.Signaled() {
		return "signal: " + e.ws.Signal().String()
	}
	return "exit status " + strconv.Itoa(e.ws.ExitStatus())
}

// ExitCode is the command's exit status, -1 when a signal ended it.
func (e commandExit) ExitCode() int {
	if e.ws.Exited() {
		return e.ws.ExitStatus()
	}
	return -1
}

// guardMain runs the guard when args ask for it and answers its exit code.
func guardMain(args []string) (int, bool) {
	if len(args) != 2 || args[0] != guardArg {
		return 0, false
	}
	return runGuard(args[1]), true
}

// runGuard runs `sh -c command` and reports its wait status to the worker;
// when the worker is gone first, it kills its process group, itself too.
func runGuard(command string) int {
	worker := os.NewFile(guardFD, "worker")
	syscall.CloseOnExec(guardFD) // the command must not hold the worker's socket
	// The worker stops a job by signalling the whole group: the guard
	// outlives the command to report how it ended. (A caught signal is
	// back to its default in the command.)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT)
	// Should the guard itself be killed alone, sh goes with it; the death
	// signal fires when the thread that started sh ends, so that thread
	// stays this goroutine's until the process exits.
	runtime.LockOSThread()
	cmd := exec.Command("sh", "-c", command)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "skiplock worker: start sh: %v\n", err)
		return 127
	}
	go func() {
		// The worker never writes: the read ends when its end closes.
		_, _ = worker.Read(make([]byte, 1))
		_ = syscall.Kill(0, syscall.SIGKILL) // 0: this process group
	}()
	_ = cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if _, err := fmt.Fprintf(worker, "%d\n", uint32(ws)); err != nil {
		return 1
	}
	return 0
}
