/* export_perfetto.c - the Perfetto protobuf trace (ui.perfetto.dev,
 * trace_processor): a Trace is a sequence of `packet` fields (1), each a
 * TracePacket written as soon as the walker reports it. Field numbers are
 * Perfetto's (decoder/perfetto_trace.proto lists the subset used here).
 * Tracks: one per process (ProcessDescriptor) and per thread
 * (ThreadDescriptor, child of its process track); slices as
 * TYPE_SLICE_BEGIN/END, instants as TYPE_INSTANT, a wake and its wakee's
 * unpark as instants carrying flow_ids / terminating_flow_ids. Per process,
 * counter tracks (CounterDescriptor, UNIT_COUNT; export_counters.h) "busy
 * threads" and "dropped events", declared at their first TYPE_COUNTER
 * sample, right after the slice or instant that changed them. Names are not
 * interned. Timestamps are ns since the trace start, on one packet sequence
 * whose first packet clears incremental state. */
#include <stdlib.h>

#include "export.h"
#include "export_counters.h"
#include "protobuf.h"

enum {
    TRACE_PACKET = 1,
    PKT_TIMESTAMP = 8, PKT_TRACK_EVENT = 11, PKT_SEQUENCE_ID = 10, PKT_SEQUENCE_FLAGS = 13,
    PKT_TRACK_DESCRIPTOR = 60,
    SEQ_INCREMENTAL_STATE_CLEARED = 1,
    TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT_UUID = 5, TD_COUNTER = 8,
    CD_UNIT = 3, UNIT_COUNT = 2,
    PD_PID = 1, PD_PROCESS_NAME = 6,
    THD_PID = 1, THD_TID = 2, THD_THREAD_NAME = 5,
    TE_DEBUG_ANNOTATIONS = 4, TE_TYPE = 9, TE_TRACK_UUID = 11, TE_CATEGORIES = 22, TE_NAME = 23,
    TE_COUNTER_VALUE = 30, TE_FLOW_IDS = 47, TE_TERMINATING_FLOW_IDS = 48,
    TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4,
    DA_INT_VALUE = 4, DA_STRING_VALUE = 6, DA_NAME = 10,
};
#define SEQUENCE_ID 1

struct perfetto {
    FILE *out;
    struct d9_pb pb;
    struct d9_counters *counters;
    int started, failed;
};

/* Track uuids: Linux pids and tids are below 2^22, so these never clash. */
static uint64_t process_uuid(uint32_t pid) { return 1ull << 63 | pid; }
static uint64_t thread_uuid(uint32_t pid, uint32_t tid) { return ((uint64_t)pid << 32 | tid) + 1; }
static uint64_t counter_uuid(uint32_t pid, enum d9_counter k) { return 1ull << 63 | 1ull << (61 - k) | pid; }

/* Opens a TracePacket (with the sequence fields) in the empty buffer. */
static struct d9_pb *packet(struct perfetto *p, int has_ts, uint64_t ts)
{
    d9_pb_reset(&p->pb);
    d9_pb_begin(&p->pb, TRACE_PACKET);
    if (has_ts)
        d9_pb_varint(&p->pb, PKT_TIMESTAMP, ts);
    d9_pb_varint(&p->pb, PKT_SEQUENCE_ID, SEQUENCE_ID);
    if (!p->started)
        d9_pb_varint(&p->pb, PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    p->started = 1;
    return &p->pb;
}

static void packet_end(struct perfetto *p)
{
    d9_pb_end(&p->pb);
    if (p->pb.failed || fwrite(p->pb.buf, 1, p->pb.n, p->out) != p->pb.n)
        p->failed = 1;
}

static void process(void *ctx, uint32_t pid, const char *name)
{
    struct d9_pb *pb = packet(ctx, 0, 0);
    d9_pb_begin(pb, PKT_TRACK_DESCRIPTOR);
    d9_pb_varint(pb, TD_UUID, process_uuid(pid));
    d9_pb_begin(pb, TD_PROCESS);
    d9_pb_int(pb, PD_PID, (int32_t)pid);
    if (*name)
        d9_pb_str(pb, PD_PROCESS_NAME, name);
    d9_pb_end(pb);
    d9_pb_end(pb);
    packet_end(ctx);
}

static void thread(void *ctx, uint32_t pid, uint32_t tid, const char *name)
{
    struct d9_pb *pb = packet(ctx, 0, 0);
    d9_pb_begin(pb, PKT_TRACK_DESCRIPTOR);
    d9_pb_varint(pb, TD_UUID, thread_uuid(pid, tid));
    d9_pb_varint(pb, TD_PARENT_UUID, process_uuid(pid));
    d9_pb_begin(pb, TD_THREAD);
    d9_pb_int(pb, THD_PID, (int32_t)pid);
    d9_pb_int(pb, THD_TID, (int32_t)tid);
    if (*name)
        d9_pb_str(pb, THD_THREAD_NAME, name);
    d9_pb_end(pb);
    d9_pb_end(pb);
    packet_end(ctx);
}

/* A TrackEvent on the item's thread track at ts; args[from..] as debug
 * annotations; flow id (when non-zero) as a flow start or end. */
static void event(struct perfetto *p, const struct d9_export_item *it, uint64_t ts, int type, const char *name,
                  unsigned from, uint64_t flow, int flow_end)
{
    struct d9_pb *pb = packet(p, 1, ts);
    d9_pb_begin(pb, PKT_TRACK_EVENT);
    d9_pb_varint(pb, TE_TYPE, (uint64_t)type);
    d9_pb_varint(pb, TE_TRACK_UUID, thread_uuid(it->pid, it->tid));
    if (name) {
        d9_pb_str(pb, TE_CATEGORIES, "dial9");
        d9_pb_str(pb, TE_NAME, name);
    }
    for (unsigned i = from; i < it->nargs; i++) {
        d9_pb_begin(pb, TE_DEBUG_ANNOTATIONS);
        d9_pb_str(pb, DA_NAME, it->args[i].key);
        if (it->args[i].str)
            d9_pb_str(pb, DA_STRING_VALUE, it->args[i].str);
        else
            d9_pb_int(pb, DA_INT_VALUE, it->args[i].v);
        d9_pb_end(pb);
    }
    if (flow)
        d9_pb_fixed64(pb, flow_end ? TE_TERMINATING_FLOW_IDS : TE_FLOW_IDS, flow);
    d9_pb_end(pb);
    packet_end(p);
}

/* A counter sample (rc from d9_counters_*: 1 a sample, -1 out of memory);
 * the track is declared, under its process, before its first sample. */
static void counter(struct perfetto *p, int rc, const struct d9_counter_sample *c)
{
    if (rc < 0)
        p->failed = 1;
    if (rc <= 0)
        return;
    if (c->first) {
        struct d9_pb *pb = packet(p, 0, 0);
        d9_pb_begin(pb, PKT_TRACK_DESCRIPTOR);
        d9_pb_varint(pb, TD_UUID, counter_uuid(c->pid, c->which));
        d9_pb_varint(pb, TD_PARENT_UUID, process_uuid(c->pid));
        d9_pb_str(pb, TD_NAME, d9_counter_name[c->which]);
        d9_pb_begin(pb, TD_COUNTER);
        d9_pb_varint(pb, CD_UNIT, UNIT_COUNT);
        d9_pb_end(pb);
        d9_pb_end(pb);
        packet_end(p);
    }
    struct d9_pb *pb = packet(p, 1, c->ts);
    d9_pb_begin(pb, PKT_TRACK_EVENT);
    d9_pb_varint(pb, TE_TYPE, TYPE_COUNTER);
    d9_pb_varint(pb, TE_TRACK_UUID, counter_uuid(c->pid, c->which));
    d9_pb_int(pb, TE_COUNTER_VALUE, c->value);
    d9_pb_end(pb);
    packet_end(p);
}

static void slice_begin(void *ctx, const struct d9_export_item *s)
{
    struct perfetto *p = ctx;
    struct d9_counter_sample c;
    event(p, s, s->ts, TYPE_SLICE_BEGIN, s->name, 0, 0, 0);
    counter(p, d9_counters_slice(p->counters, s, 0, &c), &c);
}

static void slice_end(void *ctx, const struct d9_export_item *s)
{
    struct perfetto *p = ctx;
    struct d9_counter_sample c;
    event(p, s, s->end, TYPE_SLICE_END, NULL, s->end_args, 0, 0);
    counter(p, d9_counters_slice(p->counters, s, 1, &c), &c);
}

static void instant(void *ctx, const struct d9_export_item *i)
{
    struct perfetto *p = ctx;
    struct d9_counter_sample c;
    event(p, i, i->ts, TYPE_INSTANT, i->name, 0, 0, 0);
    counter(p, d9_counters_instant(p->counters, i, &c), &c);
}

static void flow(void *ctx, const struct d9_export_item *at, uint64_t id, int end)
{
    event(ctx, at, at->ts, TYPE_INSTANT, at->name, 0, id, end);
}

static void finish(void *ctx) { (void)ctx; }

static const struct d9_export_ops perfetto_ops = {process, thread, slice_begin, slice_end, instant, flow, finish};

void *d9_perfetto_new(FILE *out, const struct d9_export_ops **ops)
{
    struct perfetto *p = calloc(1, sizeof(*p));
    if (p && !(p->counters = d9_counters_new())) {
        free(p);
        p = NULL;
    }
    if (!p)
        return NULL;
    p->out = out;
    *ops = &perfetto_ops;
    return p;
}

int d9_perfetto_free(void *ctx)
{
    struct perfetto *p = ctx;
    int rc = p->failed || fflush(p->out) != 0 || ferror(p->out) ? -1 : 0;
    d9_pb_free(&p->pb);
    d9_counters_free(p->counters);
    free(p);
    return rc;
}
