/* A compiled bot that maps 8 GB and then touches memory until it is stopped, after its
   handshake: the sandbox's memory limit ends it (a crash), the host never feels it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(void) {
    char line[65536];
    if (!fgets(line, sizeof line, stdin)) return 1;
    printf("{\"type\":\"hello\",\"protocol\":1,\"bot\":\"memory-map\"}\n");
    fflush(stdout);
    void *huge = mmap(NULL, 8UL << 30, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (huge != MAP_FAILED) memset(huge, 1, 8UL << 30);
    for (;;) {
        char *chunk = malloc(64UL << 20);
        if (chunk == NULL) abort();
        memset(chunk, 1, 64UL << 20);
    }
}
