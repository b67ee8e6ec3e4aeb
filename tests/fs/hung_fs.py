#!/usr/bin/env python3
"""A file system that never answers, as a hard-mounted NFS or SMB share
whose server went away: stat, open and readdir under it wait for as
long as it is mounted. It speaks the FUSE protocol itself (no libfuse)
on an open /dev/fuse that the caller mounted, answering INIT and
nothing else: every later request stays unanswered. Unmounting it
(umount -l) and stopping this process (by its PID) ends the waits.

Usage (as root): exec 3<>/dev/fuse;
  mount -t fuse -o fd=3,rootmode=40000,user_id=0,group_id=0,allow_other hung DIR
  hung_fs.py 3 &
"""
import os
import struct
import sys

FUSE_INIT = 26
IN_HEADER = 40          # struct fuse_in_header


def main():
    fd = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    while True:
        try:
            req = os.read(fd, 1 << 20)
        except OSError:     # unmounted, or the connection aborted
            return
        if len(req) < IN_HEADER:
            continue
        _length, opcode, unique = struct.unpack_from("<IIQ", req, 0)
        if opcode != FUSE_INIT:
            continue        # never answered: the share that does not answer
        _major, _minor, readahead, _flags = struct.unpack_from("<IIII", req, IN_HEADER)
        # struct fuse_init_out of protocol 7.31: major, minor,
        # max_readahead, flags, max_background, congestion_threshold,
        # max_write, time_gran, max_pages, map_alignment, flags2, unused
        body = struct.pack("<IIIIHHIIHHI28x", 7, 31, readahead, 0, 16, 12, 4096, 1, 0, 0, 0)
        os.write(fd, struct.pack("<IiQ", 16 + len(body), 0, unique) + body)


if __name__ == "__main__":
    main()
