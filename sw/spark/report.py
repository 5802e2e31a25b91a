"""The job's report: the summary of its results (``OUTPUT/summary.json``) and its plot (``summary.png``)."""

from __future__ import annotations

from pathlib import Path

from .config import Job

__all__ = ["plot", "summarise"]


def summarise(spark, job: Job, results: str, wall: float, png: Path) -> dict:
    from pyspark.sql import functions as F

    df = spark.read.parquet(results)
    row = df.agg(
        F.count("*").alias("frames"),
        F.countDistinct("frame_id").alias("distinct"),
        F.sum(F.col("ok").cast("int")).alias("checked"),
        F.sum(F.col("error").startswith("bad input").cast("int")).alias("quarantined"),
        F.sum((~F.col("ok") & ~F.col("error").startswith("bad input")).cast("int")).alias("mismatches"),
        F.mean("cycles").alias("cycles_mean"),
        F.percentile_approx("cycles", 0.5).alias("cycles_median"),
    ).first()
    frames = row["frames"]
    columns = ["zeros", "cycles"] + (["variance"] if job.variance else [])
    sample = df.where(F.col("ok")).select(*columns).limit(20000).toPandas()
    counts = {"frames": frames, "duplicates": frames - row["distinct"], "checked": row["checked"] or 0,
              "quarantined": row["quarantined"] or 0, "mismatches": row["mismatches"] or 0}
    plot(sample, png, job.variance, counts)
    return {
        **counts,
        "frames_per_s": round(frames / wall, 1) if wall else None, "wall_s": round(wall, 3),
        "cycles_per_frame_mean": row["cycles_mean"], "cycles_per_frame_median": row["cycles_median"],
    }


def verdict(counts: dict) -> str:
    """The line a user reads first: how many frames were checked, wrong, quarantined or in the results twice."""
    return (f"{counts['frames']:,} frames: {counts['checked']:,} checked, {counts['mismatches']:,} mismatches, "
            f"{counts['quarantined']:,} quarantined (bad input), {counts['duplicates']:,} twice")


def plot(sample, path: Path, variance: bool, counts: dict) -> None:
    """The verdict (:func:`verdict`, red unless every frame was checked or quarantined once) over variance and
    simulated cycles per frame against sparsity (zero pixels), from checked rows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 2 if variance else 1
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 3.6), squeeze=False)
    zeros = 100 * sample["zeros"]
    if variance:
        axes[0][0].scatter(zeros, sample["variance"], s=4, alpha=0.5)
        axes[0][0].set_yscale("symlog")
        axes[0][0].set_xlabel("zero pixels (%)")
        axes[0][0].set_ylabel("variance (device, checked)")
    ax = axes[0][-1]
    ax.scatter(zeros, sample["cycles"], s=4, alpha=0.5, color="C1")
    ax.set_xlabel("zero pixels (%)")
    ax.set_ylabel("simulated cycles per frame")
    wrong = counts["mismatches"] or counts["duplicates"]
    fig.suptitle(f"sfdf spark: {verdict(counts)}", color="C3" if wrong else "black", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

