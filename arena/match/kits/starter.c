/* @NAME@: my domino bot, in C11 (the c runtime: gcc), written from the arena's starter
   (`arena new-bot NAME --runtime c`; docs/writing-a-bot.md). The arena compiles it
   (gcc -std=c11 -O2 -static) in the sandbox, and shows the compiler's errors as it printed
   them. Check it and play it with:

       ./run arena check @FILE@
       ./run arena play --rules draw --bots @FILE@,greedy --games 200

   As it is, it plays the heaviest tile that fits (as bots/greedy.py does, move for move).
   The c runtime has no kit: a C bot is a program speaking the protocol itself
   (docs/protocol.md), here version 3 with the least reading it needs. Each request of an
   "act" message holds its game's legal moves ("legal_moves":["6-4L","6-4R"]), sorted; the
   bot answers each with the first of those with the most pips, in one "moves" reply
   echoing the request's "seq". It keeps no state, so it reads nothing else (a bot that
   tracks the round folds the requests' "round" and "events" in, as the kits do). The
   referee writes its JSON without spaces, one message a line. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The pips of a move's notation ("6-4L": 10). */
static int pips(const char *move) {
    char *dash;
    long high = strtol(move, &dash, 10);
    return (int)(high + strtol(dash + 1, NULL, 10));
}

/* Append the greedy move of the legal moves starting at `list` (after its '[') to `reply`. */
static void choose(const char *list, char *reply) {
    const char *best = NULL, *at = list;
    size_t best_len = 0;
    while (*at == '"') {
        const char *end = strchr(at + 1, '"');
        if (end == NULL) break;
        if (best == NULL || pips(at + 1) > pips(best)) {
            best = at + 1;
            best_len = (size_t)(end - best);
        }
        at = end + 1;
        if (*at == ',') at++;
    }
    strcat(reply, "\"");
    if (best != NULL) strncat(reply, best, best_len);
    strcat(reply, "\"");
}

int main(void) {
    char *line = NULL, *reply = NULL;
    size_t size = 0;
    FILE *out = stdout;
    while (getline(&line, &size, stdin) >= 0) {
        if (strstr(line, "\"type\":\"hello\"")) {
            fprintf(out, "{\"type\":\"hello\",\"protocol\":3,\"bot\":\"@NAME@\"}\n");
        } else if (strstr(line, "\"type\":\"act\"")) {
            const char *seq = strstr(line, "\"seq\":");
            reply = realloc(reply, strlen(line) + 64);
            if (reply == NULL) return 1;
            sprintf(reply, "{\"type\":\"moves\",\"seq\":%ld,\"moves\":[",
                    seq ? strtol(seq + 6, NULL, 10) : 0L);
            const char *found = line;
            int first = 1;
            while ((found = strstr(found, "\"legal_moves\":[")) != NULL) {
                found += strlen("\"legal_moves\":[");
                if (!first) strcat(reply, ",");
                choose(found, reply);
                first = 0;
            }
            fprintf(out, "%s]}\n", reply);
        } else if (strstr(line, "\"type\":\"quit\"")) {
            break;
        }
        fflush(out);  /* start and end messages need no reply */
    }
    free(line);
    free(reply);
    return 0;
}
