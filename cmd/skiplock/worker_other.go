//go:build !linux

package main

import (
	"io"
	"os/exec"
	"syscall"
)

// startCommand starts `sh -c command` in a process group of its own. Off
// Linux nothing ends the command should the worker die: it runs on.
func startCommand(command string, env []string, stdin io.Reader, stdout, stderr io.Writer) (*jobCommand, error) {
	cmd := exec.Command("sh", "-c", command)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, stdin, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &jobCommand{pgid: cmd.Process.Pid, wait: cmd.Wait}, nil
}

// guardMain: there is no guard off Linux.
func guardMain([]string) (int, bool) { return 0, false }
