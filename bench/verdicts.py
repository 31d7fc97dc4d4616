"""bench/verdicts.py - the verdict line of a target measured against an A/A
control, shared by bench/paired.sh and bench/latency.sh.

A service's verdict: met at or under the limit; over it, "not resolved" while
the median stays inside the range its A/A control spread over in the same
run (the method cannot tell it from noise), else missed."""


def verdict_line(what, rows, limit, aa_max, vfmt):
    """rows: (service, median value); aa_max: service -> the A/A control's
    highest value; vfmt: how a value is printed. Prints one Markdown line."""
    groups = {"met": [], "not resolved": [], "missed": []}
    for svc, v in rows:
        top = aa_max.get(svc)
        k = "met" if v <= limit else "not resolved" if top is not None and v <= top else "missed"
        groups[k].append("%s %s" % (svc, vfmt % v) + (" (A/A up to %s)" % (vfmt % top) if k == "not resolved" else ""))
    overall = "missed" if groups["missed"] else "not resolved" if groups["not resolved"] else "met"
    print("- %s: **%s** (%s)" % (what, overall, "; ".join("%s: %s" % (k, ", ".join(g)) for k, g in groups.items() if g)))
