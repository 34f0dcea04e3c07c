"""What is built from many runs: parameter sweeps (:mod:`.sweep`, :mod:`.sweeps`), the built-in
calibrations (:mod:`.builtin`, ``calibrate_*``, :mod:`.fitting`), calibration to your measurements
(:mod:`.calibrate_measured`), validation against measurements (:mod:`.validation`), ``stacksim
explain`` (:mod:`.explain`), per-IO trace comparison and calibration (``trace_*``) and the server
studies (``server_*``)."""
