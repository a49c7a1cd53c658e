#!/usr/bin/env python3
"""galera-check.py OUT: the checker of a run of tests/galera-faults.sh.

Decides, from the run's logs (every push, every execution of a job, the
faults) and the tables dumped after it settled, five properties
(FAULTS in mq-galera(7)):

  pushed      every push that printed an id with status 0 is in the job
              table or the archive, the row its own (key or payload),
              or its loss is one the settings allow (named:
              innodb_flush_log_at_trx_commit=0 on a node and the whole
              cluster's crash, kill3, within 3 s after the push); every
              job of the table comes from a push that printed its id or
              whose outcome was unknown
  once        every job is done, and exactly one of its executions was
              acked: the one of its last claim (the table's lease token);
              an ack lost as above (the crash after it, the job claimed
              again only after the crash) is counted, not a violation
  overlap     no two executions of one job overlap in time, unless the
              first lost its lease (an 'expired' history row for its
              attempt, or a later claim) and its ack was refused, or its
              claim was lost as above (counted)
  counts      the counts (_counts) and the counters of mq stats equal
              the tables; the three nodes hold the same job table
  leases      nothing left leased past its lease and a reaper run

Prints one line per property ("ok"/"VIOLATED", with the number), each
violation with the job's history (pushes, executions, history rows,
faults around them); writes OUT/verdict (property TAB violations),
OUT/lost (pushes, acks, claims lost as allowed) and OUT/throughput (jobs
done a second in each fault's window, and the rest of the run).
Exit status 0 when no property is violated, 1 otherwise.
"""
import json
import os
import sys
from collections import defaultdict

out = sys.argv[1]


def lines(name):
    p = os.path.join(out, name)
    if not os.path.exists(p):
        return []
    with open(p, errors="replace") as f:
        return [l.rstrip("\n") for l in f if l.strip()]


def ms(t):
    return (int(t) - T0) / 1e6


# ---- the logs
faults = [l.split(" ", 2) for l in lines("faults.log")]
T0 = int(faults[0][1]) if faults else 0
pushes = []          # dicts
execs = []           # dicts
for f in sorted(os.listdir(out)):
    if not f.endswith(".log") or f in ("faults.log", "galera.log"):
        continue
    for l in lines(f):
        w = l.split(" ")
        if w[0] == "P" and len(w) >= 9:
            pushes.append(dict(who=w[1], seq=w[2], key=w[3], st=int(w[4]),
                               id=w[5], t0=int(w[6]), t1=int(w[7]), payload=w[8]))
        elif w[0] == "S" and len(w) >= 8:
            execs.append(dict(who=w[1], id=w[2], attempt=int(w[3]), port=w[4],
                              t0=int(w[5]), t1=None, pid=w[6], tok=w[7],
                              acks=None))
        elif w[0] == "E" and len(w) >= 10:
            for e in reversed(execs):
                if e["who"] == w[1] and e["id"] == w[2] and e["tok"] == w[8] \
                        and e["t1"] is None:
                    e["t1"] = int(w[6])
                    e["acks"] = w[9]
                    break
            else:
                execs.append(dict(who=w[1], id=w[2], attempt=int(w[3]),
                                  port=w[4], t0=int(w[5]), t1=int(w[6]),
                                  pid=w[7], tok=w[8], acks=w[9]))

# mq work's refusals of an ack ("job N: lease lost or unknown receipt"),
# and its acks of unknown outcome
refused = defaultdict(int)
unknown_ack = set()
unknown_commit = set()   # workers told "outcome unknown" by a commit
for f in ("w1.err", "w2.err"):
    who = f[:-4]
    for l in lines(f):
        if "outcome unknown" in l:
            unknown_commit.add(who)
        if ": job " not in l:
            continue
        try:
            jid = l.split(": job ", 1)[1].split(":", 1)[0]
        except IndexError:
            continue
        # a job stopped or dropped for its lease is logged as killed (or
        # not at all): only a refused ack or fail counts here
        if "stopping it" in l or "dropped before" in l:
            continue
        if "lease lost" in l:
            refused[(who, jid)] += 1
        elif "ack sent but" in l:
            unknown_ack.add((who, jid))


def table(name):
    rows = {}
    for l in lines(name):
        c = l.split("\t")
        if len(c) >= 7:
            rows[c[0]] = dict(id=c[0], state=c[1], attempts=int(c[2]),
                              tok=c[3], until=c[4], key=c[5], payload=c[6],
                              where=name.split(".")[0])
    return rows


jobs = table("jobs.tsv")
archive = table("archive.tsv")
every = dict(archive)
every.update(jobs)
history = defaultdict(list)
for l in lines("history.tsv"):
    c = l.split("\t")
    if len(c) >= 7:
        history[c[0]].append(dict(seq=c[1], event=c[2], state=c[3],
                                  attempt=int(c[4]), worker=c[5], at=c[6]))
settings = {}
for l in lines("settings"):
    w = l.split()
    if len(w) >= 5:
        settings[w[0]] = dict(flush=w[1], sync_binlog=w[2], log_bin=w[3],
                              sync_wait=w[4])
# What a crash may lose: with innodb_flush_log_at_trx_commit=0 a node
# writes its log once a second, so kill -9 of the whole cluster (kill3)
# loses the last commits; at 2 the log is written at every commit and a
# server's crash keeps it (a machine's would not: not done here), and
# after kill2 the survivor holds every write set. So only kill3 at 0
# explains a loss, and only of what was done shortly before it.
crashes = [(int(f[1]), f[2]) for f in faults
           if f[2].split(" ")[0] == "kill3" and "killed" in f[2]]
lossy = [n for n, s in settings.items() if s["flush"] == "0"]
LOSS_NS = 3 * 10**9     # a second of log, the kills up to 0.9 s apart
ACK_NS = 6 * 10**9      # an ack is sent after its execution's end, again
                        # for up to 6 s while it fails


def lost_to(t, window=LOSS_NS):
    """When the settings allow a node to lose what it committed and the
    whole cluster crashed within window after time t: the reason,
    named; else None."""
    after = [c for c in crashes if t < c[0] <= t + window]
    if not lossy or not after:
        return None
    return (f"innodb_flush_log_at_trx_commit={settings[lossy[0]]['flush']} on "
            f"{','.join(lossy)}, coordinated crash ({after[0][1]}) at {ms(after[0][0]):.0f} ms")


# what such a crash lost, counted (allowed, named, not violations)
LOST = {k: [] for k in ("pushes", "acks", "claims")}

# ---- the executions' acks
def acked(e):
    """'yes', 'no' or 'unknown': whether this execution's ack succeeded,
    as its process saw it."""
    if e["acks"] is None or e["acks"] == "killed":
        return "no"
    if e["who"].startswith("c"):             # pop/ack loops: statuses
        sts = [a.split("@")[0] for a in e["acks"].split(",")]
        if "0" in sts:
            return "yes"
        return "unknown" if "3" in sts else "no"
    if e["acks"] != "exit0":
        return "no"
    return "unknown" if (e["who"], e["id"]) in unknown_ack else "pending"


push_of = defaultdict(list)
for p in pushes:
    push_of[p["id"]].append(p)
by_payload = {p["payload"]: p for p in pushes}


def owner(r):
    """The push whose job the row is (its payload), or None."""
    return by_payload.get(r["payload"])


# a job lost in a crash leaves its id to a later push: the executions of
# that id before the later push began were of the lost job, not the row's
by_job = defaultdict(list)
for e in execs:
    r = every.get(e["id"])
    o = owner(r) if r else None
    if o is not None and e["t0"] < o["t0"]:
        continue
    by_job[e["id"]].append(e)
for jid, es in by_job.items():
    es.sort(key=lambda e: e["t0"])
    # mq work: its stderr says which job's ack was refused, not which
    # execution's (a worker may run a job twice, its first ack held up by
    # a fault). The refusals go first to the executions of an earlier
    # claim than the row's last (whose ack, had it succeeded, would have
    # left the job done with their token), the rest to the last claim's.
    final = every.get(jid, {}).get("tok")
    for who in {e["who"] for e in es if e["who"].startswith("w")}:
        n = refused.get((who, jid), 0)
        mine = [e for e in es if e["who"] == who]
        for e in sorted(mine, key=lambda e: e["tok"] == final):
            e["ack"] = acked(e)
            if e["ack"] == "pending":
                e["ack"] = "no" if n > 0 else "yes"
                # the last claim's ack refused, the job done with its
                # token, after a commit of unknown outcome: that commit
                # had done it, and the ack sent again found it done
                if n > 0 and e["tok"] == final and who in unknown_commit \
                        and every[jid]["state"] == "done":
                    e["ack"] = "unknown"
                n -= n > 0
    for e in es:
        e.setdefault("ack", acked(e))
        if e["ack"] == "pending":
            e["ack"] = "yes"

def story(jid):
    """The job's history: its pushes, executions, history rows, row."""
    s = []
    r = every.get(jid)
    if r:
        s.append(f"    row ({r['where']}): state {r['state']}, attempts {r['attempts']}, "
                 f"token {r['tok'][:8]}, leased_until {r['until']}, payload {r['payload']}")
    else:
        s.append("    row: none, in neither the job table nor the archive")
    for p in push_of.get(jid, []):
        s.append(f"    push {p['who']} #{p['seq']} key {p['key']}: status {p['st']} "
                 f"at {ms(p['t0']):.0f}-{ms(p['t1']):.0f} ms")
    for e in by_job.get(jid, []):
        end = f"{ms(e['t1']):.0f}" if e["t1"] else "?"
        s.append(f"    exec {e['who']} attempt {e['attempt']} on port {e['port']} pid {e['pid']} "
                 f"token {e['tok'][:8]}: {ms(e['t0']):.0f}-{end} ms, ack {e['ack']} ({e['acks']})")
    for h in history.get(jid, []):
        s.append(f"    history #{h['seq']}: {h['event']} -> {h['state']}, attempt "
                 f"{h['attempt']}, worker {h['worker']}, at {h['at']}")
    ts = [e["t0"] for e in by_job.get(jid, [])] + [p["t0"] for p in push_of.get(jid, [])]
    if ts:
        lo, hi = min(ts) - 10**10, max(ts) + 10**10
        for f in faults:
            if lo <= int(f[1]) <= hi:
                s.append(f"    fault at {ms(f[1]):.0f} ms: {f[2]}")
    return s


V = {k: [] for k in ("pushed", "once", "overlap", "counts", "leases")}

# ---- pushed
for p in pushes:
    if p["st"] != 0 or p["id"] == "-":
        continue
    r = every.get(p["id"])
    # a job lost in a crash may leave its id to a later push (the
    # counter goes back with the data): the row must be the push's
    mine = r is not None and (r["key"] == p["key"] if p["key"] != "-"
                              else r["payload"] == p["payload"])
    if mine:
        continue
    why = lost_to(p["t1"])
    # its id taken by another job: a loss only if that job was pushed
    # after this one (an id is reused only once its job is gone)
    o = owner(r) if r is not None else None
    if r is not None and (o is None or o["t0"] < p["t1"]):
        why = None
    if why:
        LOST["pushes"].append(p["id"])
        print(f"# allowed loss: job {p['id']} (push {p['who']} #{p['seq']}): {why}")
        continue
    if r is not None and p["key"] != "-":
        V["pushed"].append((p["id"], f"push {p['who']} #{p['seq']} with key {p['key']} "
                            f"printed id {p['id']}, whose key is {r['key']}"))
    elif r is not None:
        V["pushed"].append((p["id"], f"push {p['who']} #{p['seq']} printed id {p['id']}, "
                            f"whose payload is {r['payload']}, not {p['payload']}"))
    else:
        V["pushed"].append((p["id"], f"push {p['who']} #{p['seq']} printed id {p['id']} "
                            f"(status 0) and the job is gone"))
for jid, r in every.items():
    if jid in push_of and any(p["st"] == 0 for p in push_of[jid]):
        continue
    p = by_payload.get(r["payload"])
    if p is not None and p["st"] == 3:
        continue        # an unknown outcome that went in
    V["pushed"].append((jid, f"job {jid} (payload {r['payload']}) comes from no push "
                        f"that printed its id or whose outcome was unknown"
                        + (f" (its push: status {p['st']})" if p else "")))

# ---- once
for jid, r in every.items():
    es = by_job.get(jid, [])
    yes = [e for e in es if e["ack"] == "yes"]
    # an ack reported done and then lost in a crash the settings allow:
    # the job ran again (counted, named)
    # (the crash after the ack, the job claimed again only after it)
    def ack_lost(e):
        why = lost_to(e["t1"], LOSS_NS + ACK_NS)
        if not why or e["tok"] == r["tok"]:
            return None
        crash = min(c[0] for c in crashes if c[0] > e["t1"])
        again = [x["t0"] for x in es if x["tok"] != e["tok"] and x["t0"] > e["t0"]]
        return why if not again or min(again) > crash else None
    gone = [e for e in yes if ack_lost(e)]
    if gone:
        LOST["acks"].append(jid)
        print(f"# allowed loss: job {jid}: the ack of token {gone[0]['tok'][:8]} "
              f"(reported done) lost: {ack_lost(gone[0])}; it ran again")
        yes = [e for e in yes if e not in gone]
    if r["state"] != "done":
        V["once"].append((jid, f"job {jid} is {r['state']}, not done"))
        continue
    last = [e for e in es if e["tok"] == r["tok"]]
    if not last:
        V["once"].append((jid, f"job {jid} is done and no execution of its last "
                          f"claim (token {r['tok'][:8]}) was logged"))
    elif len(last) > 1:
        V["once"].append((jid, f"job {jid}: its last claim ran {len(last)} times"))
    if len(yes) > 1:
        V["once"].append((jid, f"job {jid} acked {len(yes)} times"))
    elif len(yes) == 1 and last and yes[0]["tok"] != r["tok"]:
        V["once"].append((jid, f"job {jid}: the ack that succeeded is of token "
                          f"{yes[0]['tok'][:8]}, the row's is {r['tok'][:8]}"))
    elif not yes and not [e for e in last if e["ack"] == "unknown"]:
        V["once"].append((jid, f"job {jid} is done and no execution's ack succeeded"))

# ---- overlap
same_attempt = []
for jid, es in by_job.items():
    seen = defaultdict(set)
    for e in es:
        seen[e["attempt"]].add(e["tok"])
    for a, toks in seen.items():
        if len(toks) > 1:
            same_attempt.append((jid, a))
    for i, a in enumerate(es):
        for b in es[i + 1:]:
            a1 = a["t1"] if a["t1"] else float("inf")
            if b["t0"] >= a1:
                continue
            expired = any(h["event"] == "expired" and h["attempt"] == a["attempt"]
                          for h in history.get(jid, []))
            ok = (a["ack"] == "no" and b["attempt"] > a["attempt"] and expired
                  and a["tok"] != b["tok"])
            # a claim (or the extend that kept its lease) lost in a crash
            # the settings allow: the job claimed again while it ran
            # (its ack refused, the row another claim's, the job claimed
            # again after the crash)
            if not ok and a["tok"] != b["tok"] and a["ack"] != "yes" \
                    and a["tok"] != every.get(jid, {}).get("tok") \
                    and lost_to(a["t0"]) \
                    and b["t0"] > min(c[0] for c in crashes if c[0] > a["t0"]):
                if jid not in LOST["claims"]:
                    LOST["claims"].append(jid)
                    print(f"# allowed loss: job {jid}: the claim of token {a['tok'][:8]} "
                          f"lost: {lost_to(a['t0'])}; claimed again while it ran")
                continue
            if not ok:
                V["overlap"].append((jid, f"job {jid}: attempt {a['attempt']} ({a['who']}, "
                                     f"port {a['port']}, ack {a['ack']}) and attempt "
                                     f"{b['attempt']} ({b['who']}, port {b['port']}, ack "
                                     f"{b['ack']}) ran at once; first's lease "
                                     f"{'expired' if expired else 'never expired'}"))
for jid, a in same_attempt:
    print(f"# note: job {jid}: attempt {a} was claimed more than once (tokens differ)")

# ---- counts
def n(rows, state):
    return sum(1 for r in rows.values() if r["state"] == state)


counts = {}
for l in lines("counts.tsv"):
    c = l.split("\t")
    counts[c[0]] = int(c[1])
for st, have in (("done", n(jobs, "done")), ("dead", n(jobs, "dead")),
                 ("archived", len(archive))):
    if counts.get(st, 0) != have:
        V["counts"].append(("-", f"_counts says {counts.get(st, 0)} {st}, the tables {have}"))
try:
    st = json.load(open(os.path.join(out, "stats.json")))
    q = [x for x in st["queues"] if x["queue"] == "fq"]
    c = q[0]["counters"] if q else {}
    for k, have in (("pushed", len(every)), ("done", n(every, "done")),
                    ("dead", n(every, "dead"))):
        if c.get(k, 0) != have:
            V["counts"].append(("-", f"mq stats: counter {k} is {c.get(k, 0)}, the tables {have}"))
except (OSError, ValueError, KeyError, IndexError) as ex:
    V["counts"].append(("-", f"mq stats --json unreadable: {ex}"))
dg = {l.split(" ", 1)[1] for l in lines("digests")}
if len(dg) != 1:
    V["counts"].append(("-", "the nodes' job tables differ: " + "; ".join(lines("digests"))))

# ---- leases
reaped = lines("reaped")
rt = reaped[0].split(" ", 2)[2] if reaped else "9999"
for jid, r in jobs.items():
    if r["state"] == "leased" and r["until"].replace("_", " ") < rt:
        V["leases"].append((jid, f"job {jid} leased until {r['until']}, past it at the "
                            f"last reaper run ({rt})"))

# ---- the verdict
kinds = [f[2] for f in faults if f[2].split(" ")[0] in
         ("kill1", "kill2", "kill3", "stop", "isolate") and " begin" in f[2]]
seed = (lines("seed") or ["?"])[0]
print(f"# seed {seed}; faults: {', '.join(kinds) or 'none'}; jobs {len(every)}, "
      f"pushes {len(pushes)} ({sum(p['st'] == 3 for p in pushes)} unknown), "
      f"executions {len(execs)}")
# ---- throughput during each fault: executions whose ack succeeded,
# ended in the fault's window, a second; against the rest of the time
# the producers pushed (not a property: what the run shows)
windows = []
open_w = {}
for f in faults:
    w = f[2].split(" ")
    if w[0] not in ("kill1", "kill2", "kill3", "stop", "isolate"):
        continue
    if " begin" in f[2]:
        open_w[w[0]] = (int(f[1]), f[2].split(" begin")[0])
    elif w[-1] == "end" and w[0] in open_w:
        t0, name = open_w.pop(w[0])
        windows.append((t0, int(f[1]), name))
ends = sorted(e["t1"] for e in execs if e["t1"] and e.get("ack") == "yes")
if pushes and ends:
    lo, hi = min(p["t0"] for p in pushes), max(p["t1"] for p in pushes)
    inside = lambda t: any(a <= t < b for a, b, _ in windows)
    healthy_n = sum(1 for t in ends if lo <= t <= hi and not inside(t))
    healthy_s = (hi - lo - sum(min(b, hi) - max(a, lo) for a, b, _ in windows
                              if b > lo and a < hi)) / 1e9
    parts = []
    with open(os.path.join(out, "throughput"), "w") as tf:
        for a, b, name in windows:
            n = sum(1 for t in ends if a <= t < b)
            rate = n / ((b - a) / 1e9) if b > a else 0
            parts.append(f"{name} {rate:.1f}/s ({(b - a) / 1e9:.0f} s)")
            tf.write(f"{name}\t{rate:.2f}\t{(b - a) / 1e9:.1f}\n")
        hr = healthy_n / healthy_s if healthy_s > 0 else 0
        tf.write(f"healthy\t{hr:.2f}\t{healthy_s:.1f}\n")
    print(f"# jobs done a second during each fault: {'; '.join(parts) or 'no fault'}; "
          f"the rest of the pushes' time {hr:.1f}/s")
if lossy:
    print(f"# lost in coordinated crashes (innodb_flush_log_at_trx_commit="
          f"{settings[lossy[0]]['flush']}; {len(crashes)} crashes): "
          f"{len(LOST['pushes'])} pushes reported done, {len(LOST['acks'])} acks "
          f"reported done, {len(LOST['claims'])} claims")
bad = 0
with open(os.path.join(out, "lost"), "w") as lf:
    for k, v in LOST.items():
        lf.write(f"{k}\t{len(v)}\n")
with open(os.path.join(out, "verdict"), "w") as vf:
    for k, vs in V.items():
        vf.write(f"{k}\t{len(vs)}\n")
        print(f"{k}: {'ok' if not vs else 'VIOLATED'} ({len(vs)} violations)")
        shown = set()
        for jid, msg in vs:
            print("  " + msg)
            if jid != "-" and (k, jid) not in shown:
                shown.add((k, jid))
                print("\n".join(story(jid)))
        bad += len(vs)
sys.exit(1 if bad else 0)
