"""A tiny Llama-architecture model made here: random weights, a real config and a real tokenizer.

No model can be downloaded on this machine, so the serving benchmark (bench/serving/run.sh) makes
one: a byte-level BPE tokenizer trained on generated text (tokenizer.json, tokenizer_config.json,
special_tokens_map.json), a LlamaConfig sized by the flags, and LlamaForCausalLM with seeded random
weights saved as safetensors shards. The same flags and seed give the same files. Its answers are
noise; what the benchmark measures is the path the weights take, not what the model says.

Needs torch, transformers and tokenizers (the serving image's virtual environment has them).
"""
import argparse
import pathlib
import random

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

WORDS = ("model weights verified staged node cache peer origin shard tensor rank replica "
         "rollout revision digest volume mount kernel bandwidth latency token stream").split()


def corpus(seed: int, lines: int):
    rng = random.Random(seed)
    for _ in range(lines):
        yield " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 16)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=pathlib.Path)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--shard-size", default="32MB", help="max_shard_size of save_pretrained")
    parser.add_argument("--seed", type=int, default=35)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=args.vocab, special_tokens=["<unk>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(corpus(args.seed, 2000), trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>", model_max_length=512)
    fast.save_pretrained(args.out)

    config = LlamaConfig(vocab_size=len(fast), hidden_size=args.hidden,
                         intermediate_size=args.hidden * 11 // 4, num_hidden_layers=args.layers,
                         num_attention_heads=args.heads, num_key_value_heads=max(1, args.heads // 4),
                         max_position_embeddings=512, bos_token_id=fast.bos_token_id,
                         eos_token_id=fast.eos_token_id, torch_dtype="bfloat16")
    torch.manual_seed(args.seed)
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(args.out, safe_serialization=True, max_shard_size=args.shard_size)
    total = sum(p.stat().st_size for p in args.out.iterdir())
    print(f"{args.out}: {sum(p.numel() for p in model.parameters())} parameters, {total} bytes")


if __name__ == "__main__":
    main()
