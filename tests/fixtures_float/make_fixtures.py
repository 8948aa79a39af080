"""Regenerate the float/quantized model pair used by tests/test_per_layer.py.

Run with a TensorFlow install (the tests themselves need none):

    /opt/tfenv/bin/python tests/fixtures_float/make_fixtures.py

Writes small_cnn_float.tflite (float32) and small_cnn_int8.tflite (full-integer int8, int8
input and output) converted from the same Keras model with fixed seeds, so tensor names match
between the two, as `mcugen verify --per-layer --float` expects.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tensorflow as tf

HERE = Path(__file__).resolve().parent
SHAPE = (16, 16, 3)


def keras_model() -> tf.keras.Model:
    tf.keras.utils.set_random_seed(7)
    inputs = tf.keras.Input(shape=SHAPE, batch_size=1, name="image")
    x = tf.keras.layers.Conv2D(8, 3, padding="same", activation="relu", name="conv1")(inputs)
    x = tf.keras.layers.DepthwiseConv2D(3, strides=2, padding="same", activation="relu", name="dw")(x)
    x = tf.keras.layers.Conv2D(16, 1, activation="relu", name="pw")(x)
    x = tf.keras.layers.AveragePooling2D(2, name="pool")(x)
    x = tf.keras.layers.Flatten(name="flatten")(x)
    x = tf.keras.layers.Dense(10, name="logits")(x)
    outputs = tf.keras.layers.Softmax(name="probs")(x)
    return tf.keras.Model(inputs, outputs)


def representative() -> object:
    rng = np.random.default_rng(3)
    for _ in range(64):
        yield [rng.standard_normal((1, *SHAPE)).astype(np.float32)]


def main() -> None:
    model = keras_model()
    float_bytes = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.int8
    converter.inference_output_type = tf.int8
    int8_bytes = converter.convert()
    (HERE / "small_cnn_float.tflite").write_bytes(float_bytes)
    (HERE / "small_cnn_int8.tflite").write_bytes(int8_bytes)
    print(f"float {len(float_bytes)} bytes, int8 {len(int8_bytes)} bytes")


if __name__ == "__main__":
    main()
