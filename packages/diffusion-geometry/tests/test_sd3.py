"""The paper's SD3.5 map F, on a tiny randomly initialised MMDiT (diffusers) since no weights are here."""

import pytest
import torch

pytestmark = pytest.mark.slow  # importing diffusers' SD3 stack takes ~10 s of CPU


def _tiny_generator(guidance=7.0):
    from diffusers import FlowMatchEulerDiscreteScheduler, SD3Transformer2DModel
    from icml26_diffusion_geometry.sd3 import SD3Generator

    torch.manual_seed(0)
    transformer = SD3Transformer2DModel(
        sample_size=8,
        patch_size=2,
        in_channels=4,
        num_layers=1,
        attention_head_dim=8,
        num_attention_heads=2,
        joint_attention_dim=16,
        caption_projection_dim=16,
        pooled_projection_dim=16,
        out_channels=4,
        pos_embed_max_size=16,
    ).eval()
    gen = torch.Generator().manual_seed(1)
    embeddings = (
        torch.randn(1, 5, 16, generator=gen),
        torch.randn(1, 5, 16, generator=gen),
        torch.randn(1, 16, generator=gen),
        torch.randn(1, 16, generator=gen),
    )
    return SD3Generator(transformer, FlowMatchEulerDiscreteScheduler(), embeddings, steps=3, guidance=guidance)


def test_sd3_generator_is_deterministic_rowwise_and_feeds_the_geometry():
    from icml26_diffusion_geometry import generative_geometry

    F = _tiny_generator()
    z = torch.randn(2, 4, 8, 8, generator=torch.Generator().manual_seed(2))
    out = F(z)
    assert out.shape == (2, 4, 8, 8) and out.dtype == torch.float32
    torch.testing.assert_close(F(z[1:]), out[1:], rtol=1e-5, atol=1e-5)
    geo = generative_geometry(F, z, 4, 0.02, generator=torch.Generator().manual_seed(0), batch_size=3)
    assert geo.LS.shape == (2,) and torch.isfinite(geo.LC).all() and geo.PHFE_map.shape == (2, 8, 8)


def test_missing_weights_raise_a_clear_error(tmp_path):
    from icml26_diffusion_geometry.sd3 import load_pipeline

    with pytest.raises((FileNotFoundError, ImportError), match="model_path="):  # ImportError without the extra
        load_pipeline(str(tmp_path / "no-model"))


class _FakePipeline:
    """What measure_sd35 uses of StableDiffusion3Pipeline, around the tiny MMDiT (random prompt embeddings)."""

    def __init__(self):
        generator = _tiny_generator()
        self.transformer, self.scheduler = generator.transformer, generator.scheduler
        self.device = torch.device("cpu")

    def encode_prompt(self, prompt, **kwargs):
        gen = torch.Generator().manual_seed(len(prompt))
        return (
            torch.randn(1, 5, 16, generator=gen),
            torch.randn(1, 5, 16, generator=gen),
            torch.randn(1, 16, generator=gen),
            torch.randn(1, 16, generator=gen),
        )


def test_paper_measurement_runs_end_to_end_on_a_stand_in_pipeline(tmp_path, monkeypatch):
    from icml26_diffusion_geometry import sd3
    from icml26_diffusion_geometry.experiment import CLAIMS, Config

    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("pair_id\tlabel\tprompt\n1\tid\ta red apple\n1\tood\tan apple made of thunder\n")
    monkeypatch.setattr(sd3, "LATENT_SHAPE", (4, 8, 8))
    monkeypatch.setattr(sd3, "load_pipeline", lambda path: _FakePipeline())
    config = Config(
        seeds=(0,),
        backbone="sd3.5-medium",
        d_low=2,
        sampler_steps=2,
        samples=3,
        sensitivity_directions=2,
        full_norm_samples=1,
        bootstrap=5,
        prompt_pairs=str(pairs),
        ablation_guidance=(),
    )
    from icml26_diffusion_geometry import method

    latent_dtypes = []
    geometry = method.generative_geometry

    def spy(F, *args, **kwargs):  # the analytic case also calls it, on its own generators
        if isinstance(F, sd3.SD3Generator):
            latent_dtypes.append(kwargs.get("latent_dtype"))
        return geometry(F, *args, **kwargs)

    monkeypatch.setattr(method, "generative_geometry", spy)
    metrics = sd3.measure_sd35(config, tmp_path)
    assert latent_dtypes and all(d == next(_FakePipeline().transformer.parameters()).dtype for d in latent_dtypes)
    assert {c.metric for c in CLAIMS} <= set(metrics)
    assert all(len(v) == 1 for v in metrics.values())
