"""Which container image runs a component, and why.

In order: an image named in the script (pyxis/apptainer/shifter), mapped through the
site config when it is a file (.sqsh, .sif); the image the site config gives
for a module or software environment the job loads; the site default; else a
placeholder with a diagnostic. Never a silent guess.
"""

from __future__ import annotations

from migrate import ir

from .translation_context import PLACEHOLDER_IMAGE, Context

_URI_SCHEMES = ("docker://", "oras://", "library://", "shub://", "docker-daemon://")
_SHIFTER_TYPE = "docker:"


def normalise(reference: str) -> str | None:
    """A registry reference from a pyxis/apptainer/shifter image name, or None for files and variables."""
    ref = reference.strip()
    if not ref or "$" in ref or ref.startswith(("/", ".", "~")) or ref.endswith((".sqsh", ".sif", ".simg")):
        return None
    for scheme in _URI_SCHEMES:
        if ref.startswith(scheme):
            ref = ref[len(scheme) :]
            break
    # Shifter names the image type first: docker:nersc/pytorch:24.06.01 (not a registry host "docker"
    # with a port, which has a number after the colon)
    if ref.startswith(_SHIFTER_TYPE) and not ref[len(_SHIFTER_TYPE) : len(_SHIFTER_TYPE) + 1].isdigit():
        ref = ref[len(_SHIFTER_TYPE) :]
    # enroot separates the registry with '#': nvcr.io#nvidia/pytorch:24.03-py3
    return ref.replace("#", "/", 1)


def choose(ctx: Context, comp: ir.Component, index: int) -> str:
    """The image of one component; software fidelity entries are recorded once (component 0)."""
    image, source = _pick(ctx, comp)
    if index == 0:
        _software_entries(ctx, image, source)
    if source == "default":
        ctx.diag(
            "TRANSLATE-IMAGE-DEFAULT",
            f"no image for this job in the site config; the site default {image} was used",
        )
    elif source == "placeholder":
        ctx.diag(
            "TRANSLATE-IMAGE-PLACEHOLDER",
            f"no container image known for this job; {PLACEHOLDER_IMAGE} was written (set images: or "
            "defaults.image in the site config)",
        )
    return image


def _pick(ctx: Context, comp: ir.Component) -> tuple[str, str]:
    """(image, where it came from: container | module:<m> | <kind>:<name> | default | placeholder)."""
    job = ctx.job
    for container in comp.containers:
        item = f"container image {container.image}"
        mapped = ctx.site.image_for(container.image)
        if mapped:
            ctx.fidelity.mapped(item, f"image {mapped} (site config)", container.line)
            return mapped, "container"
        ref = normalise(container.image)
        if ref:
            ctx.fidelity.mapped(item, f"image {ref}", container.line)
            return ref, "container"
        ctx.fidelity.approximated(
            item,
            "an image file or a variable, not a registry reference; "
            "the site config (images:) does not map it",
            container.line,
        )
    for module in job.modules:
        image = ctx.site.image_for(f"module:{module}") or ctx.site.image_for(module)
        if image:
            return image, f"module:{module}"
    for env in job.software_envs:
        image = ctx.site.image_for(f"{env.key}:{env.value}") or ctx.site.image_for(env.value)
        if image:
            return image, f"{env.key}:{env.value}"
    if ctx.site.default_image:
        return ctx.site.default_image, "default"
    return PLACEHOLDER_IMAGE, "placeholder"


def _software_entries(ctx: Context, image: str, source: str) -> None:
    """Modules and environments: the one that chose the image is mapped, the image must provide the rest."""
    where = "the image" if source == "placeholder" else f"image {image}"
    for module in ctx.job.modules:
        if source == f"module:{module}":
            ctx.fidelity.mapped(f"module {module}", f"provided by {where} (site config)")
        else:
            shim = "" if ctx.native is not None else "; 'module' is a no-op shim"
            ctx.fidelity.approximated(f"module {module}", f"{where} must provide it{shim}")
    for env in ctx.job.software_envs:
        if source == f"{env.key}:{env.value}":
            ctx.fidelity.mapped(f"{env.key} {env.value}", f"provided by {where} (site config)")
        else:
            ctx.fidelity.approximated(f"{env.key} {env.value}", f"{where} must provide it")


__all__ = ["choose", "normalise"]
