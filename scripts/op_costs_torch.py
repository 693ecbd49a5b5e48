"""Forward + backward time of single ops in PyTorch eager on CPU at the shapes of one masked-LM
step of the paper model: the counterpart of `cargo run -p experiments --example op_costs`
(same shapes, same harness: loss = sum(op(x) * w), median of 20 after 5 warm-up calls)."""
import torch, time
torch.manual_seed(0)
def tm(name, shape, f):
    x0 = torch.randn(shape); w = torch.randn(shape); ts = []
    for i in range(25):
        x = x0.clone().requires_grad_()
        t = time.perf_counter(); y = f(x); t1 = time.perf_counter() - t
        (y * w).sum().backward(); _ = x.grad[0]; t2 = time.perf_counter() - t
        if i >= 5: ts.append((t1, t2))
    ts.sort(key=lambda a: a[1]); f_, fb = ts[len(ts)//2]
    print(f"{name:>12} {shape}: fwd {f_*1e3:7.3f} ms  fwd+bwd {fb*1e3:7.3f} ms")
print(f"pytorch {torch.__version__}, {torch.get_num_threads()} threads")
tm("softmax", (32,4,64,64), lambda x: torch.softmax(x, 3))
tm("log_softmax", (307,22546), lambda x: torch.log_softmax(x, 1))
ln = torch.nn.LayerNorm(128)
tm("layer_norm", (32,64,128), ln)
tm("gelu", (32,64,512), torch.nn.functional.gelu)
wl = (torch.randn(128,512)*0.02).requires_grad_()
tm("linear128x512", (2048,128), lambda x: (x @ wl)[:, :128])
tm("add", (32,64,128), lambda x: x + x)
emb = (torch.randn(22546,128)*0.02).requires_grad_()
tm("lm_head", (307,128), lambda x: (x @ emb.t())[:, :128])
k = torch.randn(32,4,64,32).requires_grad_()
tm("scores", (32,4,64,32), lambda q: (q @ k.transpose(2,3))[..., :32])
tm("heads", (32,64,128), lambda x: x.reshape(32,64,4,32).transpose(1,2).contiguous().transpose(1,2).reshape(32,64,128) * 1.0)
