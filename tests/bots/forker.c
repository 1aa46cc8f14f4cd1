/* A compiled bot that starts a process before its handshake: in the sandbox fork() fails
   (seccomp: threads only), it says so and exits: a crash, nothing left running. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "fork failed: %s\n", strerror(errno));
        return 3;
    }
    if (child == 0) {
        for (;;) pause();
    }
    return 4; /* a fork that worked: still a crash, its child killed with the sandbox */
}
