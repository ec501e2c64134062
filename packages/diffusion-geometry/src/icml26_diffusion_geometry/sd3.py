"""The paper's setting: the generator map F of Stable Diffusion 3.5 Medium (diffusers), for the ``paper`` config.

``SD3Generator`` is F as in the official analyser: the initial noise latent z (N, 16, 64, 64) runs through
``steps`` flow-matching Euler steps of the MMDiT with classifier-free guidance on fixed prompt embeddings
(empty negative prompt) and returns the final latents, without VAE decoding. The network runs in
bfloat16 on the accelerator; z and the returned latents are float32 on the CPU, and the sampler casts its
input to bfloat16. The official code holds z and the neighbour z' = z + W n in bfloat16; it adds the Jacobian
steps eps w_i to them in float32 and rounds once, and builds the derivative points z + eps V1 and
z' + eps V1' in bfloat16 arithmetic (V1 rounded to bfloat16, eps V1 rounded, the sum rounded).
``measure_sd35`` follows that order (``generative_geometry(..., latent_dtype=F.dtype)``, issues 20 and 27).
Weights are read from disk only (``local_files_only``): nothing is downloaded at run time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from icml26_shared import check_int, check_number, derive, get_logger

log = get_logger("diffusion-geometry")
LATENT_SHAPE = (16, 64, 64)  # SD3.5 Medium at 512 x 512


class SD3Generator:
    """F(z) for one prompt: CFG sampling with ``transformer`` and a flow-matching ``scheduler``.

    ``embeddings`` = (prompt, negative prompt, pooled prompt, pooled negative) as returned by
    ``StableDiffusion3Pipeline.encode_prompt``, each with a batch dimension of 1."""

    def __init__(self, transformer, scheduler, embeddings, steps: int = 12, guidance: float = 7.0, dtype=None):
        self.transformer = transformer
        self.scheduler = scheduler
        self.embeddings = embeddings
        self.steps = check_int("steps", steps, 1)
        self.guidance = check_number("guidance", guidance)
        self.dtype = dtype or next(transformer.parameters()).dtype
        self.device = next(transformer.parameters()).device

    @torch.no_grad()
    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        pos_c, neg_c, pos_p, neg_p = (e.to(self.device, self.dtype) for e in self.embeddings)
        n = z.shape[0]
        latents = z.to(self.device, self.dtype) * getattr(self.scheduler, "init_noise_sigma", 1.0)
        self.scheduler.set_timesteps(self.steps, device=self.device)
        cfg = self.guidance > 1.0
        enc = torch.cat([neg_c.expand(n, -1, -1), pos_c.expand(n, -1, -1)]) if cfg else pos_c.expand(n, -1, -1)
        pool = torch.cat([neg_p.expand(n, -1), pos_p.expand(n, -1)]) if cfg else pos_p.expand(n, -1)
        for t in self.scheduler.timesteps:
            inp = torch.cat([latents, latents]) if cfg else latents
            if hasattr(self.scheduler, "scale_model_input"):
                inp = self.scheduler.scale_model_input(inp, t)
            velocity = self.transformer(
                hidden_states=inp,
                timestep=t.float().expand(inp.shape[0]),
                encoder_hidden_states=enc,
                pooled_projections=pool,
                return_dict=False,
            )[0]
            if cfg:
                uncond, cond = velocity.chunk(2)
                velocity = uncond + self.guidance * (cond - uncond)  # classifier-free guidance
            latents = self.scheduler.step(velocity, t, latents, return_dict=False)[0]
        return latents.float().cpu()


def load_pipeline(model_path: str) -> Any:
    """StableDiffusion3Pipeline from a local folder or the local Hugging Face cache, bfloat16, on the GPU
    when there is one. A missing model raises FileNotFoundError saying where to put it; missing text-encoder
    libraries raise ImportError naming the ``sd35`` extra."""
    from diffusers import StableDiffusion3Pipeline

    device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        pipe = StableDiffusion3Pipeline.from_pretrained(model_path, torch_dtype=torch.bfloat16, local_files_only=True)
    except ImportError as err:
        raise ImportError(
            f"model_path={model_path!r}: the SD3.5 text encoders need the sd35 extra "
            f"(pip install 'icml26-diffusion-geometry[sd35]'); {str(err).strip()}"
        ) from None
    except (OSError, ValueError) as err:
        raise FileNotFoundError(
            f"model_path={model_path!r}: expected a local diffusers copy of Stable Diffusion 3.5 Medium "
            f"(download it once with `huggingface-cli download stabilityai/stable-diffusion-3.5-medium`); {err}"
        ) from None
    for part in ("transformer", "vae", "text_encoder", "text_encoder_2", "text_encoder_3"):
        module = getattr(pipe, part, None)
        if module is not None:
            module.requires_grad_(False)
    return pipe.to(device)


def measure_sd35(config, out_dir: Path) -> dict[str, list[float]]:
    """The paper config: every prompt pair's ID and OOD prompt from the same latents, per seed."""
    from .baselines import output_sensitivity
    from .data import load_prompt_pairs
    from .measurements import analytic_case, id_ood_statistics
    from .method import generative_geometry

    pairs = load_prompt_pairs(config.prompt_pairs)
    pipe = load_pipeline(config.model_path)
    metrics: dict[str, list[float]] = {}
    for seed in config.seeds:
        geos: dict[str, list] = {"ID": [], "OOD": []}
        sens: dict[str, list] = {"ID": [], "OOD": []}
        for pair_id, prompts in sorted(pairs.items()):
            z = torch.randn(
                config.samples, *LATENT_SHAPE, generator=torch.Generator().manual_seed(derive(seed, "z", pair_id))
            )
            for label, prompt in prompts.items():
                embeddings = pipe.encode_prompt(
                    prompt=prompt,
                    prompt_2=None,
                    prompt_3=None,
                    device=pipe.device,
                    do_classifier_free_guidance=True,
                    negative_prompt="",
                )
                F = SD3Generator(pipe.transformer, pipe.scheduler, embeddings, config.sampler_steps, config.guidance)
                for i in range(config.samples):  # one latent at a time: W alone is D x D_low = 16 MB
                    gen = torch.Generator().manual_seed(derive(seed, "subspace", pair_id, i))
                    one = z[i : i + 1]
                    geos[label].append(
                        generative_geometry(
                            F, one, config.d_low, config.eps, generator=gen, batch_size=4, latent_dtype=F.dtype
                        )
                    )
                    gen = torch.Generator().manual_seed(derive(seed, "sensitivity", pair_id, i))
                    sens[label].append(output_sensitivity(F, one, None, config.eps, config.sensitivity_directions, gen))
                log.info("seed %d pair %d %s done", seed, pair_id, label)
        pooled = {label: _pool(parts) for label, parts in geos.items()}
        extra = {"sensitivity": [torch.cat(sens["ID"]).numpy(), torch.cat(sens["OOD"]).numpy()]}
        values = analytic_case(config, seed) | id_ood_statistics(config, seed, pooled["ID"], pooled["OOD"], extra)
        for key, value in values.items():
            metrics.setdefault(key, []).append(float(value))
    return metrics


def _pool(parts: list) -> Any:
    """Concatenate the Geometry records of several prompt pairs along the sample axis."""
    from .method import Geometry

    fields = Geometry.__dataclass_fields__
    return Geometry(**{name: torch.cat([getattr(p, name) for p in parts]) for name in fields})
