/* The message-passing ops' functions and integer op on the CPU (core/ops.h). */
#include <math.h>

#include "cpu_internal.h"

static double sigmoid(double x)
{
    if (x >= 0)
        return 1.0 / (1.0 + exp(-x));
    const double e = exp(x);
    return e / (1.0 + e);
}

static double softplus(double x)
{
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

double cpu_unary(double x, mlff_unary_kind kind, double p)
{
    double s, t;
    switch (kind) {
    case MLFF_UNARY_EXP:
        return exp(x);
    case MLFF_UNARY_SIN:
        return sin(x);
    case MLFF_UNARY_COS:
        return cos(x);
    case MLFF_UNARY_POW:
        return p == 1.0 ? x : p == 2.0 ? x * x : p == 0.5 ? sqrt(x) : p == -1.0 ? 1.0 / x : pow(x, p);
    case MLFF_UNARY_LOG:
        return log(x);
    case MLFF_UNARY_LESS:
        return x < p ? 1.0 : 0.0;
    case MLFF_UNARY_LESS_EQUAL:
        return x <= p ? 1.0 : 0.0;
    case MLFF_UNARY_SIGMOID:
        return sigmoid(x);
    case MLFF_UNARY_SIGMOID_D1:
        s = sigmoid(x);
        return s * (1 - s);
    case MLFF_UNARY_SIGMOID_D2:
        s = sigmoid(x);
        return s * (1 - s) * (1 - 2 * s);
    case MLFF_UNARY_SOFTPLUS:
        return softplus(x);
    case MLFF_UNARY_SHIFTED_SOFTPLUS:
        return softplus(x) - M_LN2;
    case MLFF_UNARY_TANH:
        return tanh(x);
    case MLFF_UNARY_TANH_D1:
        t = tanh(x);
        return 1 - t * t;
    case MLFF_UNARY_TANH_D2:
        t = tanh(x);
        return -2 * t * (1 - t * t);
    case MLFF_UNARY_SILU:
        return x * sigmoid(x);
    case MLFF_UNARY_SILU_D1:
        s = sigmoid(x);
        return s * (1 + x * (1 - s));
    case MLFF_UNARY_SILU_D2:
        s = sigmoid(x);
        return s * (1 - s) * (2 + x * (1 - 2 * s));
    default:
        return NAN; /* the builder admits no other kind */
    }
}

mlff_status cpu_index_column(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    (void)be;
    (void)err;
    const int32_t *x = n->inputs[0].buffer;
    int32_t *y = n->output.buffer;
    const int64_t rows = n->output.rows, cols = n->inputs[0].cols, c = n->attrs.i[0];
    for (int64_t r = 0; r < rows; r++)
        y[r] = x[r * cols + c];
    return MLFF_OK;
}
