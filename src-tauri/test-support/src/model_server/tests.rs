use super::*;

#[test]
fn pairing_is_checked() {
    let ok = json!({"messages": [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "a"}, {"id": "b"}]},
        {"role": "tool", "tool_call_id": "b", "content": "1"},
        {"role": "tool", "tool_call_id": "a", "content": "2"},
        {"role": "assistant", "content": "done"}
    ]});
    assert_eq!(tool_results_paired(&ok), Ok(()));
    let missing = json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "a"}]}, {"role": "user", "content": "?"}]});
    assert!(tool_results_paired(&missing).is_err());
    let twice = json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "a"}]}, {"role": "tool", "tool_call_id": "a"}, {"role": "tool", "tool_call_id": "a"}]});
    assert!(tool_results_paired(&twice).unwrap_err().contains("more than one"));
    let stray = json!({"messages": [{"role": "tool", "tool_call_id": "z"}]});
    assert!(tool_results_paired(&stray).is_err());
}
