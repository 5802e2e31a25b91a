"""Teleport messaging (004), in one place: synchronous dataflow and messages timed by the stream dependence function.

:mod:`~sfdf.gen.sdf.rates` (phases, balance equations, the repetition vector, pull schedules),
:mod:`~sfdf.gen.sdf.sdep` (004 Sec. 3's SDEP table), :mod:`~sfdf.gen.sdf.messages` (a message's route and the
firing it is delivered at), :mod:`~sfdf.gen.sdf.schedule` (a schedule that meets every message's latency),
:mod:`~sfdf.gen.sdf.check` (the SDF rules of a spec, as one-line errors), :mod:`~sfdf.gen.sdf.liveness` (bounded
channels in self-timed execution: live, or where each node waits), :mod:`~sfdf.gen.sdf.pipeline` (the generated
hardware's timing cycle by cycle, and its throughput by SDF3's state-space method), :mod:`~sfdf.gen.sdf.model` (the SDF
reference model, messages delivered at their firings). It reads the model and the spec, and the SFDF
analysis (:mod:`sfdf.gen.analysis`) never imports it.
"""
