#!/usr/bin/env python3
"""fault-proxy.py: a Unix-socket relay to a MariaDB server that loses the
connection at the worst moment: once a client packet containing TRIGGER
has reached the server, the server's answer is thrown away and both
sides are closed. The server ran the statement; the client never learns
it. Fires once (then relays plainly), and writes FIRED_FILE when it did.

usage: fault-proxy.py LISTEN_PATH SERVER_PATH TRIGGER FIRED_FILE [N]
(TRIGGER may hold backslash escapes: '\x03COMMIT')

A TRIGGER that begins with 're:' is a regular expression over the
packet's bytes instead ('re:[0-9]\x03lqb\x03lqb': the binary parameters
of an UPDATE claim of queue lqb, whose queue follows the host:pid).

With FAULT_PROXY_EXIT=1 in its environment, it exits once it fired:
the client cannot connect again.

Settings in its environment: FP_CUT_MS=M closes both sides M ms after
the trigger packet reached the server, answered or not (a statement
still running: held up by a row lock, say); FP_NTH=K fires on the K-th
matching packet, not the first; FP_TIMES=T fires on T matching packets
(each on its connection), not once.

With FP_ROLLBACK=1 it rolls back instead: before the matching packet
(the K-th, with FP_NTH) goes on to the server, the proxy sends the
server a ROLLBACK of its own on that connection and throws its answer
away: the client's transaction ends without the client being told, as
a Galera brute-force abort that lands in a COM_STMT_PREPARE leaves it
(mq-sql(7), WHAT BREAKS THE CONTRACT). Then it relays plainly.

With FP_ERROR=E it answers with an error instead: once the matching
packet has reached the server, the server's answer (an OK: a COMMIT's,
an autocommitted write's) is replaced by error E, the connection kept.
The server did it; the client is told it failed, as a Galera node that
lost its primary component while it replicated the transaction tells it
(1180, "Error while appending streaming replication fragment(provider
status: Not connected to Primary Component)"), the other nodes having
committed it (seen in tests/galera-faults.sh runs).

With FP_DELAY_MS=M it delays instead: the matching packet (the K-th,
with FP_NTH) is held M ms before it goes on to the server (FIRED_FILE
written when it arrives), then it relays plainly: a client caught
between two statements for as long as the test needs (a wakeup's KILL
QUERY that finds it there ends nothing).

With N, it interrupts instead: the first N client packets that are one
of TRIGGER's '|'-separated parts, whole, never reach the server, and
the client gets error 1317 (query execution was interrupted) for each,
as a KILL QUERY would give it; then it relays plainly. A part that ends
in '*' is a packet's beginning instead.
"""
import os
import re
import selectors
import socket
import sys
import time

listen_path, server_path, trigger, fired_file = sys.argv[1:5]
interrupts = int(sys.argv[5]) if len(sys.argv) > 5 else 0
# backslash escapes allowed: '\x03COMMIT' is the COM_QUERY of a COMMIT
pattern = None
if trigger.startswith("re:"):
    pattern = re.compile(trigger[3:].encode().decode("unicode_escape")
                         .encode("latin-1"), re.DOTALL)
trigger = trigger.encode().decode("unicode_escape").encode("latin-1")
starts = trigger.split(b"|")
fired = False
nth = int(os.environ.get("FP_NTH", "1"))
times = int(os.environ.get("FP_TIMES", "1"))
cut_s = float(os.environ.get("FP_CUT_MS", "0")) / 1000
cuts = {}  # server socket -> when to close it
silent_rollback = os.environ.get("FP_ROLLBACK") == "1"
answer_error = int(os.environ.get("FP_ERROR", "0"))
delay_s = float(os.environ.get("FP_DELAY_MS", "0")) / 1000
ERROR_TEXT = {1180: b"Error while appending streaming replication fragment"
              b"(provider status: Not connected to Primary Component)"}


def read_packet(s):
    """One whole packet from s (blocking)."""
    buf = b""
    while len(buf) < 4 or len(buf) < 4 + int.from_bytes(buf[:3], "little"):
        more = s.recv(65536)
        if not more:
            break
        buf += more
    return buf


def interrupted(seq):
    """The ERR packet a killed statement gets: 1317, SQLSTATE 70100."""
    body = (b"\xff" + (1317).to_bytes(2, "little") + b"#70100" +
            b"Query execution was interrupted")
    return len(body).to_bytes(3, "little") + bytes([(seq + 1) & 0xff]) + body

def error_packet(seq, err):
    """An ERR packet: err, SQLSTATE HY000, the server's text for it."""
    body = (b"\xff" + err.to_bytes(2, "little") + b"#HY000" +
            ERROR_TEXT.get(err, b"Injected error"))
    return len(body).to_bytes(3, "little") + bytes([seq]) + body


if os.path.exists(listen_path):
    os.unlink(listen_path)
lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
lsock.bind(listen_path)
lsock.listen(16)
sel = selectors.DefaultSelector()
sel.register(lsock, selectors.EVENT_READ, None)
peer = {}      # socket -> its other side
armed = set()  # server sockets whose next answer is to be lost


def close(s):
    other = peer.pop(s, None)
    for x in (s, other):
        if x is None:
            continue
        peer.pop(x, None)
        armed.discard(x)
        try:
            sel.unregister(x)
        except (KeyError, ValueError):
            pass
        x.close()


while True:
    now = time.monotonic()
    for srv_s, at in list(cuts.items()):
        if at <= now:
            del cuts[srv_s]
            open(fired_file, "w").close()
            close(srv_s)
    for key, _ in sel.select(0.02 if cuts else None):
        s = key.fileobj
        if s is lsock:
            c, _ = lsock.accept()
            srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            srv.connect(server_path)
            peer[c], peer[srv] = srv, c
            sel.register(c, selectors.EVENT_READ, "client")
            sel.register(srv, selectors.EVENT_READ, "server")
            continue
        try:
            data = s.recv(65536)
        except OSError:
            data = b""
        if not data:
            close(s)
            continue
        if s in armed and answer_error:
            # the server answered the statement: tell the client it failed
            armed.discard(s)
            open(fired_file, "w").close()
            peer[s].sendall(error_packet(data[3], answer_error))
            continue
        if s in armed:
            # the server answered the statement: lose the answer
            open(fired_file, "w").close()
            close(s)
            if os.environ.get("FAULT_PROXY_EXIT") == "1":
                lsock.close()
                sys.exit(0)
            continue
        other = peer.get(s)
        if other is None:
            continue
        if (key.data == "client" and interrupts and len(data) > 4 and
                any(data[4:] == p or (p.endswith(b"*") and
                                      data[4:].startswith(p[:-1]))
                    for p in starts)):
            interrupts -= 1
            open(fired_file, "a").write("interrupted\n")
            s.sendall(interrupted(data[3]))
            continue
        match = (key.data == "client" and not fired and not interrupts and
                 len(sys.argv) == 5 and
                 (pattern.search(data) if pattern else trigger in data))
        if match and delay_s:
            nth -= 1
            if nth == 0:
                fired = True
                open(fired_file, "w").close()
                time.sleep(delay_s)
            other.sendall(data)
            continue
        if match and silent_rollback:
            nth -= 1
            if nth == 0:
                fired = True
                other.setblocking(True)
                other.sendall(b"\x09\x00\x00\x00\x03ROLLBACK")
                read_packet(other)
                open(fired_file, "w").close()
        other.sendall(data)
        if match and not silent_rollback:
            nth -= 1
            if nth > 0:
                continue
            times -= 1
            fired = times <= 0
            if cut_s:
                cuts[other] = time.monotonic() + cut_s
            else:
                armed.add(other)
