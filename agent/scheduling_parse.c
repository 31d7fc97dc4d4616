/* scheduling_parse.c - see scheduling_parse.h. */
#include <linux/perf_event.h>
#include <string.h>

#include "scheduling_parse.h"

#ifndef PERF_RECORD_MISC_SWITCH_OUT_PREEMPT
#define PERF_RECORD_MISC_SWITCH_OUT_PREEMPT (1 << 14) /* Linux 4.17 */
#endif

int d9_schedstat_run_delay(const char *buf, size_t len, uint64_t *run_delay)
{
    uint64_t f[3] = {0, 0, 0};
    size_t i = 0;
    for (int k = 0; k < 3; k++) {
        while (i < len && buf[i] == ' ')
            i++;
        size_t start = i;
        while (i < len && buf[i] >= '0' && buf[i] <= '9' && i - start < 20)
            f[k] = f[k] * 10 + (uint64_t)(buf[i++] - '0');
        if (i == start)
            return -1;
    }
    *run_delay = f[1];
    return 0;
}

/* Copies n bytes at free-running position pos of the ring (wrapping). */
static void ring_copy(void *dst, const uint8_t *data, uint64_t size, uint64_t pos, size_t n)
{
    uint64_t off = pos & (size - 1);
    size_t first = size - off < n ? (size_t)(size - off) : n;
    memcpy(dst, data + off, first);
    memcpy((uint8_t *)dst + first, data, n - first);
}

uint32_t d9_perf_switches(const uint8_t *data, uint64_t size, uint64_t *tail, uint64_t head,
                          struct d9_switch_state *st, struct d9_preempt *out, uint32_t max,
                          uint64_t *lost)
{
    uint32_t n = 0;
    uint64_t pos = *tail;
    while (pos < head && n < max) {
        struct perf_event_header h;
        if (head - pos < sizeof(h)) {
            pos = head;
            break;
        }
        ring_copy(&h, data, size, pos, sizeof(h));
        if (h.size < sizeof(h) || h.size > head - pos || h.size > size) {
            pos = head; /* cannot find the next record: give up on this stretch */
            st->pending = 0;
            break;
        }
        uint64_t ts = 0;
        if (h.size >= sizeof(h) + sizeof(ts))
            ring_copy(&ts, data, size, pos + h.size - sizeof(ts), sizeof(ts));
        if (h.type == PERF_RECORD_SWITCH && h.size >= sizeof(h) + sizeof(ts)) {
            if (h.misc & PERF_RECORD_MISC_SWITCH_OUT) {
                /* A switch-out without the preempt flag is the thread blocking. */
                st->pending = (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0;
                st->out_ts = ts;
            } else if (st->pending) {
                if (ts >= st->out_ts)
                    out[n++] = (struct d9_preempt){st->out_ts, ts - st->out_ts};
                st->pending = 0;
            }
        } else if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 2 * sizeof(uint64_t)) {
            uint64_t count;
            ring_copy(&count, data, size, pos + sizeof(h) + sizeof(uint64_t), sizeof(count));
            *lost += count;
            st->pending = 0;
        }
        pos += h.size;
    }
    *tail = pos;
    return n;
}
