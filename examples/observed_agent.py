"""The remote echo agent of ``remote_agent.py`` with its OpenTelemetry metrics served for Prometheus.

    uvicorn observed_agent:app --app-dir examples      # or: make deploy-demo METRICS=1

The application sets OpenTelemetry up, as docs/observability.md says an application does (the
generated runtime only speaks the API): a meter provider whose reader is OpenTelemetry's
Prometheus exporter, served at ``http://127.0.0.1:PORT/metrics``. PORT is ``ACP_METRICS_PORT``,
else the worker's own port plus 1000 under ``deploy/launch.py`` (which names it in
``ACP_WORKER_PORT``), else 9464. The providers are set before the app is made: each connection,
and the app's gauges, look for them when they are made. It needs ``opentelemetry-sdk`` and
``opentelemetry-exporter-prometheus`` (the application's choice; acpgen's ``otel`` extra is the
API alone).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from opentelemetry import metrics
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
from prometheus_client import start_http_server


def metrics_port() -> int:
    """Where the metrics are served: ``ACP_METRICS_PORT``, else the worker's port + 1000, else 9464."""
    if os.environ.get("ACP_METRICS_PORT"):
        return int(os.environ["ACP_METRICS_PORT"])
    worker = os.environ.get("ACP_WORKER_PORT")
    return int(worker) + 1000 if worker else 9464


start_http_server(metrics_port(), addr="127.0.0.1")
metrics.set_meter_provider(MeterProvider(metric_readers=[PrometheusMetricReader()]))

sys.path.insert(0, str(Path(__file__).resolve().parent))  # remote_agent.py beside this file
from remote_agent import app  # noqa: E402 - made once the providers are set

__all__ = ["app"]
