"""Peer tickets as the operator signs them (core/pki/peer_ticket.h, docs/peer.md "Peer scope"),
made here with the openssl command line and the scenario's peer CA key. The e2e checks act as
the operator when they read from a peer as a node; being a second implementation of the format,
this also shows the agents accept what was not made by the C++ signer.

    python3 e2e/peer_ticket.py --ca-key KEY --node NODE --sha256 sha256:... [--sha256 ...]
"""
import argparse
import base64
import hashlib
import subprocess
import time


def files_root(digests):
    """RFC 9162's Merkle tree hash over the distinct file digests ("sha256:<hex>"), in
    ascending byte order (core/digest/file_set_tree.h)."""
    leaves = sorted({bytes.fromhex(d.removeprefix("sha256:")) for d in digests})

    def tree_hash(items):
        if len(items) == 1:
            return hashlib.sha256(b"\x00" + items[0]).digest()
        split = 1 << ((len(items) - 1).bit_length() - 1)  # largest power of two below n
        return hashlib.sha256(b"\x01" + tree_hash(items[:split]) + tree_hash(items[split:])).digest()

    return tree_hash(leaves) if leaves else hashlib.sha256(b"").digest()


def sign(ca_key, node, digests, lifetime=3600):
    expires = int(time.time()) + lifetime
    payload = f"{node}\n{files_root(digests).hex()}\n{expires}".encode()
    signed = b"modelplane-statement\x00peer-ticket-v1\x00" + payload
    signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", ca_key], input=signed,
                               capture_output=True, check=True).stdout
    return "v1." + base64.b64encode(payload).decode() + "." + base64.b64encode(signature).decode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ca-key", required=True)
    parser.add_argument("--node", required=True)
    parser.add_argument("--sha256", action="append", required=True)
    parser.add_argument("--lifetime", type=int, default=3600)
    args = parser.parse_args()
    print(sign(args.ca_key, args.node, args.sha256, args.lifetime))


if __name__ == "__main__":
    main()
