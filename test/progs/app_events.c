/* app_events.c - records application events through include/dial9.h and
 * prints what it recorded, the ground truth test_app_events compares the
 * decoded trace with. Usage: app_events THREADS EVENTS
 * Checks the API first and prints "api: FAILED <what>" on a mismatch:
 * a bad name (empty, 16 bytes, a space) gives -1/EINVAL, the same name the
 * same id, an id never returned -1/EINVAL, and (with "full") 256 names
 * fill the table (-1/ENOSPC after). Then THREADS threads each record
 * EVENTS events, alternating "req.start" (value: the thread's index i of
 * the event) and "req.end" (value: -i), and the main thread records one
 * "queue:len" from a SIGUSR1 handler (value 7). Prints one line a name,
 *   "app NAME count C sum S min MIN max MAX"
 * then "api: ok" (or the failure). Linked with weak declarations: without
 * the agent it prints "api: no agent". */
#define DIAL9_WEAK
#include <dial9.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int id_start, id_end, id_queue;
static long events;

static void *recorder(void *arg)
{
    (void)arg;
    for (long i = 0; i < events; i++)
        if (dial9_event(i % 2 ? id_end : id_start, i % 2 ? -i : i) != 0)
            abort();
    return NULL;
}

static void on_usr1(int sig)
{
    (void)sig;
    int saved = errno;
    if (dial9_event(id_queue, 7) != 0)
        abort();
    errno = saved;
}

/* "" when the API behaves as include/dial9.h says, else what did not. */
static const char *check_api(int full)
{
    if (dial9_event_id("") != -1 || errno != EINVAL || dial9_event_id("sixteen-bytes-xx") != -1 || errno != EINVAL ||
        dial9_event_id("a b") != -1 || errno != EINVAL || dial9_event_id(NULL) != -1 || errno != EINVAL)
        return "a bad name was taken";
    if (dial9_event_id("req.start") != id_start || dial9_event_id("fifteen-bytes-x") < 1)
        return "the same name gave another id";
    if (dial9_event(0, 1) != -1 || errno != EINVAL || dial9_event(257, 1) != -1 || errno != EINVAL)
        return "an unknown id was taken";
    if (full) {
        char name[16];
        int last = 0;
        for (int i = 0; i < 256 && last >= 0; i++) {
            snprintf(name, sizeof(name), "n%d", i);
            last = dial9_event_id(name);
        }
        if (last != -1 || errno != ENOSPC || dial9_event_id("req.end") != id_end)
            return "the table did not fill at 256 names";
    }
    return "";
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int nthreads = atoi(argv[1]), full = argc > 3 && !strcmp(argv[3], "full");
    events = atol(argv[2]);
    if (!dial9_event_id) {
        puts("api: no agent");
        return 0;
    }
    id_start = dial9_event_id("req.start");
    id_end = dial9_event_id("req.end");
    id_queue = dial9_event_id("queue:len");
    if (id_start < 1 || id_end < 1 || id_queue < 1 || id_start == id_end)
        return 3;
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    pthread_t th[64];
    for (int i = 0; i < nthreads && i < 64; i++)
        pthread_create(&th[i], NULL, recorder, NULL);
    for (int i = 0; i < nthreads && i < 64; i++)
        pthread_join(th[i], NULL);
    long starts = (events + 1) / 2, ends = events / 2, ssum = 0, esum = 0;
    for (long i = 0; i < events; i++)
        i % 2 ? (esum -= i) : (ssum += i);
    printf("app req.start count %ld sum %ld min 0 max %ld\n", starts * nthreads, ssum * nthreads,
           events > 0 ? (events - 1) / 2 * 2 : 0);
    printf("app req.end count %ld sum %ld min %ld max -1\n", ends * nthreads, esum * nthreads,
           events > 1 ? -((events - 2) / 2 * 2 + 1) : 0);
    printf("app queue:len count 1 sum 7 min 7 max 7\n");
    const char *bad = check_api(full);
    printf("api: %s%s\n", *bad ? "FAILED " : "ok", bad);
    return 0;
}
