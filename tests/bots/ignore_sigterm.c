/* A compiled bot that ignores SIGTERM (and SIGINT, SIGHUP) and never answers a move: a
   timeout, and the sandbox's SIGKILL still ends it. */
#include <signal.h>
#include <stdio.h>

int main(void) {
    char line[65536];
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    if (!fgets(line, sizeof line, stdin)) return 1;
    printf("{\"type\":\"hello\",\"protocol\":1,\"bot\":\"ignore-sigterm\"}\n");
    fflush(stdout);
    for (volatile unsigned long spin = 0;; ++spin) {
    }
}
