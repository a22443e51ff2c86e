"""The main job: a small CNN trained on the bundled digits reaches >= 97% test accuracy, and
its checkpoint loads in real PyTorch."""
import numpy as np

import ember
from ember._demo import build_model, demo


def test_demo_reaches_97_percent_and_saves_a_torch_checkpoint(tmp_path, torch_mod):
    out = tmp_path / "digits.pt"
    accuracy = demo(out=str(out), verbose=False)
    assert accuracy >= 0.97
    state = torch_mod.load(out, weights_only=True)
    model = build_model(torch_mod.nn)
    model.load_state_dict(state)
    test = ember.vision.datasets.Digits(train=False)
    x = np.stack([test[i][0].numpy() for i in range(len(test))])
    with torch_mod.no_grad():
        predicted = model(torch_mod.tensor(x)).argmax(1).numpy()
    torch_accuracy = (predicted == test.targets.numpy()).mean()
    assert abs(torch_accuracy - accuracy) < 1e-9  # the same weights give the same answers
