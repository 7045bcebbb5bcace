"""The serving benchmark's timeline (bench/serving/run.sh): from the objects and logs it saved.

Every time is in seconds after the ModelRevision and the Deployment were applied. Kubernetes
object timestamps have one-second resolution; vLLM's log lines carry kubelet's nanosecond
timestamps (kubectl logs --timestamps); `ready` and the requests are measured by run.sh itself.
"""
import argparse
import datetime
import json
import pathlib
import re


def seconds(text: str) -> float:
    text = re.sub(r"(\.\d{6})\d*", r"\1", text.replace("Z", "+00:00"))
    return datetime.datetime.fromisoformat(text).timestamp()


def go_duration_seconds(text: str) -> float:
    """Seconds in a Go duration string such as "1m25.304s" or "850ms"."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6}
    return sum(float(number) * units[unit]
               for number, unit in re.findall(r"([0-9.]+)(h|ms|us|µs|m|s)", text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state", type=pathlib.Path, required=True)
    for name in ("applied", "ready", "first", "second", "bytes"):
        parser.add_argument(f"--{name}", type=float, required=True)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    args = parser.parse_args()
    at = lambda t: round(t - args.applied, 2)  # noqa: E731

    revision = json.loads((args.state / "revision.json").read_text())
    digest = revision["status"]["digest"]
    cache = json.loads((args.state / "modelcache.json").read_text())
    entry = next(e for e in cache["status"]["revisions"] if e["digest"] == digest)
    staging = {k: at(seconds(v)) for k, v in entry.get("timestamps", {}).items()}

    pod = json.loads((args.state / "pod.json").read_text())
    conditions = {c["type"]: at(seconds(c["lastTransitionTime"])) for c in pod["status"]["conditions"]}
    container = pod["status"]["containerStatuses"][0]
    started = at(seconds(container["state"]["running"]["startedAt"]))
    events = json.loads((args.state / "events.json").read_text())["items"]
    pull = next((e["message"] for e in events if e["reason"] == "Pulled"
                 and e["involvedObject"]["name"] == pod["metadata"]["name"]), "")
    # kubelet writes Go durations: "in 850ms", "in 1m25.304s (1m25.304s including waiting)".
    pull_duration = re.search(r" in ((?:[0-9.]+(?:h|m|s|ms|us|µs))+)", pull)
    pulled = go_duration_seconds(pull_duration.group(1)) if pull_duration else None

    engine = {}
    marks = {"model_load_started": "Starting to load model",
             "weights_loaded": "Loading weights took",
             "engine_initialised": "init engine",
             "api_up": "Application startup complete"}
    for line in (args.state / "vllm.log").read_text().splitlines():
        stamp, _, message = line.partition(" ")
        for name, needle in marks.items():
            if needle in message and name not in engine:
                engine[name] = at(seconds(stamp))
        took = re.search(r"Loading weights took ([0-9.]+) seconds", message)
        if took:
            engine["weights_load_seconds"] = float(took.group(1))

    result = {
        "model_bytes": int(args.bytes),
        "staging": staging,
        "bytes_to_ready_seconds": staging.get("verified"),
        "pod": {"created": at(seconds(pod["metadata"]["creationTimestamp"])),
                "scheduled": conditions.get("PodScheduled"),
                "image_pull_seconds": pulled,
                "container_started": started,
                "containers_ready": conditions.get("ContainersReady"),
                "ready": at(args.ready)},
        "engine": engine,
        "first_request_seconds": args.first,
        "second_request_seconds": args.second,
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
