#!/usr/bin/env python3
"""Delays packets by a fixed time in user space, for kernels without sch_netem.

    nfq_delay.py QUEUE DELAY_MS

Run inside a network namespace, beside an iptables rule that sends packets
to NFQUEUE number QUEUE (`-j NFQUEUE --queue-num QUEUE --queue-bypass`).
It binds the queue over a raw nfnetlink socket (nfnetlink_queue, metadata
only: no packet bytes are copied), holds each packet DELAY_MS milliseconds
and then accepts it, so every packet leaves at least DELAY_MS late. Prints
"ready" once bound; ends on SIGTERM or SIGINT, unbinding the queue (with
--queue-bypass the packets then pass undelayed). Standard library only.
"""

import collections
import errno
import os
import select
import signal
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG = 0, 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_QUEUE_MAXLEN, NFQA_CFG_MASK, NFQA_CFG_FLAGS = 1, 2, 3, 4, 5
NFQNL_CFG_CMD_BIND, NFQNL_CFG_CMD_UNBIND = 1, 2
NFQNL_COPY_META = 1
NFQA_CFG_F_FAIL_OPEN = 1  # a full queue lets packets pass rather than dropping them
NFQA_PACKET_HDR, NFQA_VERDICT_HDR = 1, 2
NF_ACCEPT = 1
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
SOL_NETLINK, NETLINK_NO_ENOBUFS = 270, 5


def attr(kind, payload):
    n = 4 + len(payload)
    return struct.pack("=HH", n, kind) + payload + b"\0" * (-n % 4)


def message(msg_type, queue, attrs, flags=NLM_F_REQUEST, seq=0):
    body = struct.pack("=BBH", socket.AF_UNSPEC, 0, socket.htons(queue)) + b"".join(attrs)
    return struct.pack("=IHHII", 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | msg_type, flags, seq, 0) + body


def config(sock, queue, attrs, seq):
    """A config message, waiting for the kernel's acknowledgement."""
    sock.send(message(NFQNL_MSG_CONFIG, queue, attrs, NLM_F_REQUEST | NLM_F_ACK, seq))
    while True:
        data = sock.recv(65536)
        for msg_type, payload in parse(data):
            if msg_type == NLMSG_ERROR:
                code = struct.unpack_from("=i", payload)[0]
                if code:
                    raise OSError(-code, f"nfnetlink_queue config: {os.strerror(-code)}")
                return


def parse(data):
    """(type, payload) of each netlink message in data."""
    at = 0
    while at + 16 <= len(data):
        length, msg_type = struct.unpack_from("=IH", data, at)
        if length < 16:
            break
        yield msg_type, data[at + 16:at + length]
        at += (length + 3) & ~3


def packet_id(payload):
    """The packet id of an NFQNL_MSG_PACKET's payload (after its nfgenmsg)."""
    at = 4
    while at + 4 <= len(payload):
        n, kind = struct.unpack_from("=HH", payload, at)
        if n < 4:
            break
        if kind & 0x7FFF == NFQA_PACKET_HDR:
            return struct.unpack_from("!I", payload, at + 4)[0]
        at += (n + 3) & ~3
    return None


def main():
    queue, delay = int(sys.argv[1]), float(sys.argv[2]) / 1000.0
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE: room for every packet held
    sock.setsockopt(SOL_NETLINK, NETLINK_NO_ENOBUFS, 1)
    sock.bind((0, 0))
    config(sock, queue, [attr(NFQA_CFG_CMD, struct.pack("!BBH", NFQNL_CFG_CMD_BIND, 0, socket.AF_INET))], 1)
    config(sock, queue, [attr(NFQA_CFG_PARAMS, struct.pack("!IB", 0, NFQNL_COPY_META)),
                         attr(NFQA_CFG_QUEUE_MAXLEN, struct.pack("!I", 65536)),
                         attr(NFQA_CFG_MASK, struct.pack("!I", NFQA_CFG_F_FAIL_OPEN)),
                         attr(NFQA_CFG_FLAGS, struct.pack("!I", NFQA_CFG_F_FAIL_OPEN))], 2)
    stop = []
    for signo in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signo, lambda *_: stop.append(1))
    held = collections.deque()  # (release time, packet id), in arrival order: one delay, so release order too
    passed = 0
    print(f"ready: queue {queue}, {delay * 1000:g} ms", flush=True)
    while not stop:
        wait = max(0.0, held[0][0] - time.monotonic()) if held else 1.0
        try:
            readable, _, _ = select.select([sock], [], [], wait)
        except InterruptedError:
            continue
        while readable:  # every message queued now
            try:
                data = sock.recv(1 << 20, socket.MSG_DONTWAIT)
            except BlockingIOError:
                break
            except OSError as e:
                if e.errno != errno.ENOBUFS:
                    raise
                continue
            now = time.monotonic()
            for msg_type, payload in parse(data):
                if msg_type == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
                    pid = packet_id(payload)
                    if pid is not None:
                        held.append((now + delay, pid))
        now = time.monotonic()
        while held and held[0][0] <= now:
            _, pid = held.popleft()
            sock.send(message(NFQNL_MSG_VERDICT, queue,
                              [attr(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, pid))]))
            passed += 1
    for _, pid in held:
        sock.send(message(NFQNL_MSG_VERDICT, queue, [attr(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, pid))]))
    try:
        config(sock, queue, [attr(NFQA_CFG_CMD, struct.pack("!BBH", NFQNL_CFG_CMD_UNBIND, 0, socket.AF_INET))], 3)
    except OSError:
        pass
    print(f"stopped: {passed} packets delayed", flush=True)


if __name__ == "__main__":
    main()
