import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TitleField } from "./TitleField";

afterEach(() => cleanup());

describe("TitleField", () => {
  const setup = () => {
    const onChange = vi.fn();
    const onEnter = vi.fn();
    render(<TitleField value="春天" label="Title" placeholder="Untitled" onChange={onChange} onEnter={onEnter} />);
    return { field: screen.getByTestId("title-input"), onChange, onEnter };
  };

  it("is a one-row field: Enter goes on to the body, a pasted line break becomes a space", () => {
    const { field, onChange, onEnter } = setup();
    expect(field.tagName).toBe("TEXTAREA");
    expect(field.getAttribute("rows")).toBe("1");
    fireEvent.keyDown(field, { key: "Enter" });
    expect(onEnter).toHaveBeenCalledTimes(1);
    fireEvent.change(field, { target: { value: "春天\r\n来了\n" } });
    expect(onChange).toHaveBeenLastCalledWith("春天 来了 ");
  });

  it("leaves Enter alone while an input method composes", () => {
    const { field, onEnter } = setup();
    fireEvent.keyDown(field, { key: "Enter", isComposing: true });
    fireEvent.keyDown(field, { key: "Enter", keyCode: 229 });
    expect(onEnter).not.toHaveBeenCalled();
  });
});
