import os, sys
sys.path.insert(0, os.path.dirname(__file__))  # `from helpers import ...` whatever the import mode

def pytest_report_header(config):
  try:
    from teeny import Device
    return f"teeny device: {Device.DEFAULT}"
  except Exception as e:  # the report header must never break collection
    return f"teeny device: unavailable ({e!r})"
