"""Scrapes Kite's metrics endpoint with the Prometheus Python client's parsers.

    metrics_scrape.py URL

Fetches URL twice, as the Prometheus text format (no Accept header) and as OpenMetrics
(Accept: application/openmetrics-text), parses each with prometheus_client's parser for that
format (either raises on malformed input) and prints one JSON object:

    {"text": {SAMPLE: VALUE}, "openmetrics": {SAMPLE: VALUE},
     "types": {FAMILY: TYPE}, "content_types": {"text": CT, "openmetrics": CT}}

where SAMPLE is the sample name followed by its labels sorted by name, as
name{a="x",b="y"}.
"""

import json
import sys
import urllib.request

from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families as text_families


def fetch(url, accept=None):
    request = urllib.request.Request(url)
    if accept:
        request.add_header("Accept", accept)
    with urllib.request.urlopen(request, timeout=20) as r:
        return r.headers.get("Content-Type"), r.read().decode("utf-8")


def samples(families, types):
    out = {}
    for family in families:
        types[family.name] = family.type
        for s in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
            key = f"{s.name}{{{labels}}}" if labels else s.name
            if key in out:
                raise SystemExit(f"sample {key} appears twice")
            out[key] = s.value
    return out


def main():
    url = sys.argv[1]
    types = {}
    text_ct, text = fetch(url)
    om_ct, om = fetch(url, "application/openmetrics-text; version=1.0.0")
    result = {
        "text": samples(text_families(text), types),
        "openmetrics": samples(openmetrics_families(om), types),
        "types": types,
        "content_types": {"text": text_ct, "openmetrics": om_ct},
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
