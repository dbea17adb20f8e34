"""CPU kernels for *direct* stride-1 convolution: no column matrix at all.

The im2col path (:mod:`minitorch.backends.cpu.conv`) copies every receptive
field into a column of a big matrix and hands it to the matrix product.  For
the small layers of a network such as LeNet (1 or 6 input channels, 5 x 5
kernels) that matrix is many times larger than the image, and copying it,
multiplying it with a thin matrix and folding its gradient back cost more
than the arithmetic.  These kernels read the image itself.  They are a
*specialised* path beside im2col: :func:`minitorch.ops.conv.conv2d` uses them
only for stride 1 on the CPU, above a minimum amount of work (see
``docs/kernels.md``); everything else still goes through im2col.

**The flattened-plane trick.**  Pad the image once (zeros around it, so the
kernels need no bounds tests) and view each padded channel plane, ``Hp x
Wp``, as one row of ``Hp*Wp`` numbers.  For stride 1, the input pixel that
output ``(y, x)`` reads through tap ``(c, i, j)`` is at flat position

    (y*Wp + x) + off,      off = c*Hp*Wp + i*dh*Wp + j*dw,

so *every* tap is a shift of the same flat index ``p = y*Wp + x``.  An
output plane computed on the same flat grid (row pitch ``Wp``, not ``ow``)
is then, for each tap, one long contiguous loop ``acc[p] += w * x[p + off]``
over ``(oh-1)*Wp + ow`` positions (rounded up to whole SIMD steps; the grids
have a zero tail for that): long enough to vectorise well, where an output
row (10 or 28 pixels in LeNet) is not.  The ``Wp - ow`` positions at the end
of each grid row are not outputs (their windows wrap around to the next
row): they are computed and thrown away -- 14 % extra arithmetic for
LeNet's first layer, 44 % for its second (10 outputs in a 14-wide row) --
for loops with no edge cases.

**Taps four at a time.**  ``acc[p] += w * x[p + off]`` loads and stores
``acc[p]`` for one multiply-add: the load/store units, not the arithmetic,
would set the speed.  The loops here add four taps per pass,
``acc[p] += w0*x[p+o0] + w1*x[p+o1] + w2*x[p+o2] + w3*x[p+o3]``: six memory
operations for four multiply-adds; and two output channels per pass share
the four loads (eight multiply-adds).  The taps of a group may come from
different rows and channels: the offsets are just numbers.

**Backward.**  The gradient with respect to the input of a stride-1
convolution is itself a stride-1 convolution: of the output gradient,
padded by ``d*(k-1) - p`` on each side, with the kernel flipped and its
in/out channels swapped (the "full" correlation) -- but half of that
correlation's multiply-adds would be with the padding.
:func:`conv_input_grad` instead sends each output gradient back through
each tap onto the input's grid (the adjoint of the forward, scatter form),
several output channels per pass so that each store of the grid carries
several multiply-adds.  The weight gradient
``gw[o, tap] = sum_{n,p} g[n, o, p] * x[n, p + off_tap]`` is a dot product
along the same flat grid (the output gradient is laid out on it, with zeros
in the thrown-away positions): :func:`conv_weight_grad` computes four taps
per pass, with four running sums that LLVM keeps as SIMD partial sums
(``fastmath`` "reassoc"), and the bias gradient on the way.

All arrays are C-contiguous.  Each kernel does the tasks ``t0 .. t1 - 1``
(an image for the forward and the input gradient, an output channel for the
weight gradient);
``*_parallel`` runs one task per ``prange`` iteration, used by the backend
only for large inputs on several threads.
"""

import numpy as np
from numba import njit, prange

_JIT = dict(cache=True, error_model="numpy")
_PARALLEL = dict(parallel=True, **_JIT)


@njit(fastmath={"contract"}, **_JIT)
def conv_forward(xf, wf, offs, bias, has_bias, og, gstride, wp, oh, ow, span, out, t0, t1):
    """``out[n, o] = bias[o] + sum_t wf[o, t] * x[n, tap t]`` for the images ``t0 .. t1-1``.

    ``xf``: (N, C*plane) padded images on their grids, each flattened;
    ``wf``: (O, T) weights, T = (C/groups)*kh*kw taps; ``offs``: (T,) flat
    offset of each tap from the start of its group's first channel;
    ``out``: (N, O, oh*ow).  Output channel ``o`` is in group ``o // og``,
    whose channels start ``gstride`` numbers further per group.  ``span``
    grid positions are computed (``(oh-1)*wp + ow`` rounded up to a whole
    number of SIMD steps, so the vector loop has no scalar remainder; the
    grids have a zero tail that long).  Two output channels of a group are
    computed together: each input load then feeds two multiply-adds.
    """
    nout, ntap = wf.shape
    acc = np.empty(2 * span, out.dtype)
    acc0 = acc[:span]
    acc1 = acc[span:]
    for n in range(t0, t1):
        xn = xf[n]
        o = 0
        while o < nout:
            base = (o // og) * gstride
            pair = o + 1 < nout and (o + 1) // og == o // og
            o1 = o + 1 if pair else o         # unpaired: channel o twice, the copy dropped
            for p in range(2 * span):
                acc[p] = 0
            t = 0
            while t + 4 <= ntap:              # four taps per pass over the grid
                w0, w1, w2, w3 = wf[o, t], wf[o, t + 1], wf[o, t + 2], wf[o, t + 3]
                v0, v1, v2, v3 = wf[o1, t], wf[o1, t + 1], wf[o1, t + 2], wf[o1, t + 3]
                a0 = xn[base + offs[t]:]
                a1 = xn[base + offs[t + 1]:]
                a2 = xn[base + offs[t + 2]:]
                a3 = xn[base + offs[t + 3]:]
                for p in range(span):
                    x0, x1, x2, x3 = a0[p], a1[p], a2[p], a3[p]
                    acc0[p] += w0 * x0 + w1 * x1 + w2 * x2 + w3 * x3
                    acc1[p] += v0 * x0 + v1 * x1 + v2 * x2 + v3 * x3
                t += 4
            while t < ntap:                   # the last one to three taps
                w0, v0 = wf[o, t], wf[o1, t]
                a0 = xn[base + offs[t]:]
                for p in range(span):
                    acc0[p] += w0 * a0[p]
                    acc1[p] += v0 * a0[p]
                t += 1
            # Keep the real outputs (the first ow of each grid row), plus the bias.
            for k in range(2 if pair else 1):
                row_acc = acc0 if k == 0 else acc1
                b = bias[o + k] if has_bias else 0
                for y in range(oh):
                    row = row_acc[y * wp:]
                    dst = out[n, o + k, y * ow:]
                    for x in range(ow):
                        dst[x] = row[x] + b
            o += 2 if pair else 1


@njit(fastmath={"contract"}, **_JIT)
def conv_input_grad(gp, w, og, cg, wp, ph, pw, dh, dw, span, gx, t0, t1):
    """``gx[n, c]``: every output gradient sent back through every tap, for images ``t0..t1-1``.

    ``gp``: (N, O, grid) output gradient on the flat grid of the forward
    (row pitch ``wp``, zeros at the thrown-away positions and in the tail);
    ``w``: (O, cg, kh, kw); ``gx``: (N, C, H, W).  A tap (i, j) sends
    ``g[p]`` to grid position ``p + i*dh*wp + j*dw`` of the padded input
    channel: eight (then four, then one) output channels per pass (the same
    destinations, several sources), then the inside of the padded grid is
    ``gx``.
    """
    kh, kw = w.shape[2], w.shape[3]
    nch, h, wd = gx.shape[1], gx.shape[2], gx.shape[3]
    hp = h + 2 * ph
    acc = np.empty(hp * wp + span, gx.dtype)
    for n in range(t0, t1):
        for c in range(nch):
            grp = c // cg
            cl = c - grp * cg
            o0 = grp * og
            for p in range(acc.shape[0]):
                acc[p] = 0
            for i in range(kh):
                for j in range(kw):
                    dst = acc[i * dh * wp + j * dw:]
                    k = 0
                    while k + 8 <= og:        # eight output channels per pass ...
                        o = o0 + k
                        w0, w1 = w[o, cl, i, j], w[o + 1, cl, i, j]
                        w2, w3 = w[o + 2, cl, i, j], w[o + 3, cl, i, j]
                        w4, w5 = w[o + 4, cl, i, j], w[o + 5, cl, i, j]
                        w6, w7 = w[o + 6, cl, i, j], w[o + 7, cl, i, j]
                        g0, g1, g2, g3 = gp[n, o], gp[n, o + 1], gp[n, o + 2], gp[n, o + 3]
                        g4, g5, g6, g7 = gp[n, o + 4], gp[n, o + 5], gp[n, o + 6], gp[n, o + 7]
                        for p in range(span):
                            dst[p] += ((w0 * g0[p] + w1 * g1[p] + w2 * g2[p] + w3 * g3[p])
                                       + (w4 * g4[p] + w5 * g5[p] + w6 * g6[p] + w7 * g7[p]))
                        k += 8
                    while k + 4 <= og:        # ... then four ...
                        o = o0 + k
                        w0, w1 = w[o, cl, i, j], w[o + 1, cl, i, j]
                        w2, w3 = w[o + 2, cl, i, j], w[o + 3, cl, i, j]
                        g0, g1, g2, g3 = gp[n, o], gp[n, o + 1], gp[n, o + 2], gp[n, o + 3]
                        for p in range(span):
                            dst[p] += w0 * g0[p] + w1 * g1[p] + w2 * g2[p] + w3 * g3[p]
                        k += 4
                    while k < og:             # ... then one
                        w0 = w[o0 + k, cl, i, j]
                        g0 = gp[n, o0 + k]
                        for p in range(span):
                            dst[p] += w0 * g0[p]
                        k += 1
            for y in range(h):
                row = acc[(y + ph) * wp + pw:]
                for x in range(wd):
                    gx[n, c, y, x] = row[x]


@njit(fastmath={"reassoc", "contract"}, **_JIT)
def conv_weight_grad(xf, gp, span, offs, og, gstride, gw, gb, t0, t1):
    """``gw[o, t] = sum_{n,p} gp[n, o, p] * x[n, p + off_t]`` and ``gb[o] = sum gp[:, o]``.

    ``gp``: (N, O, oh*Wp) output gradient on the flat grid (row pitch Wp),
    zero at the thrown-away positions, of which the first ``span`` are read; ``gw``: (O, T); ``gb``: (O,).
    Task = one output channel ``o``.
    """
    n_img = xf.shape[0]
    ntap = gw.shape[1]
    zero = np.zeros(1, gw.dtype)[0]          # a 0 of the arrays' dtype: float32 sums stay float32
    for o in range(t0, t1):
        base = (o // og) * gstride
        for t in range(ntap):
            gw[o, t] = 0
        bsum = 0.0
        for n in range(n_img):
            g = gp[n, o]
            xn = xf[n]
            t = 0
            while t + 4 <= ntap:              # four dot products per pass over g
                a0 = xn[base + offs[t]:]
                a1 = xn[base + offs[t + 1]:]
                a2 = xn[base + offs[t + 2]:]
                a3 = xn[base + offs[t + 3]:]
                s0 = s1 = s2 = s3 = zero
                for p in range(span):
                    v = g[p]
                    s0 += v * a0[p]
                    s1 += v * a1[p]
                    s2 += v * a2[p]
                    s3 += v * a3[p]
                gw[o, t] += s0
                gw[o, t + 1] += s1
                gw[o, t + 2] += s2
                gw[o, t + 3] += s3
                t += 4
            while t < ntap:
                a0 = xn[base + offs[t]:]
                s0 = zero
                for p in range(span):
                    s0 += g[p] * a0[p]
                gw[o, t] += s0
                t += 1
            s0 = zero
            for p in range(span):
                s0 += g[p]
            bsum += s0
        gb[o] = bsum


@njit(**_JIT)
def to_grid(src, wp, pad_h, pad_w, dst, t0, t1):
    """Copy planes ``src`` (N*C, h, w) into ``dst`` (N*C, rows*wp + tail) at row
    ``pad_h``, column ``pad_w`` of a zeroed grid with row pitch ``wp``: zero
    padding, or the flat-grid layout of an output gradient.  Task = one plane."""
    h, w = src.shape[1], src.shape[2]
    for k in range(t0, t1):
        d = dst[k]
        for p in range(d.shape[0]):
            d[p] = 0
        for y in range(h):
            row = d[(y + pad_h) * wp + pad_w:]
            s = src[k, y]
            for x in range(w):
                row[x] = s[x]


# ---------------------------------------------------------------------------
# The parallel drivers: one prange iteration per task of the serial kernel.
# ---------------------------------------------------------------------------
@njit(**_PARALLEL)
def conv_forward_parallel(xf, wf, offs, bias, has_bias, og, gstride, wp, oh, ow, span, out):
    for t in prange(xf.shape[0]):
        task = np.int64(t)
        conv_forward(xf, wf, offs, bias, has_bias, og, gstride, wp, oh, ow, span, out, task,
                     task + 1)


@njit(**_PARALLEL)
def conv_input_grad_parallel(gp, w, og, cg, wp, ph, pw, dh, dw, span, gx):
    for t in prange(gx.shape[0]):
        task = np.int64(t)
        conv_input_grad(gp, w, og, cg, wp, ph, pw, dh, dw, span, gx, task, task + 1)


@njit(**_PARALLEL)
def conv_weight_grad_parallel(xf, gp, span, offs, og, gstride, gw, gb):
    for t in prange(gw.shape[0]):
        task = np.int64(t)
        conv_weight_grad(xf, gp, span, offs, og, gstride, gw, gb, task, task + 1)


@njit(**_PARALLEL)
def to_grid_parallel(src, wp, pad_h, pad_w, dst):
    for t in prange(src.shape[0]):
        task = np.int64(t)
        to_grid(src, wp, pad_h, pad_w, dst, task, task + 1)
