import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { apiError, FakeTransport } from "../../shared/api/fake";
import { makeCtx, WithCtx } from "../../shared/testing/utils";
import { QuotaForm } from "./QuotaForm";

afterEach(() => cleanup());

describe("quota form", () => {
  it("a failed save reaches the person through the app's one error path, not a banner of its own", async () => {
    const transport = new FakeTransport().on("usage.setQuotas", () => {
      throw apiError("VALIDATION", "dailyTokens: too large");
    });
    const showError = vi.fn();
    render(
      <WithCtx ctx={makeCtx(transport, "en", { showError })}>
        <QuotaForm quotas={{}} todayTokens={0} monthCost={0} />
      </WithCtx>,
    );
    fireEvent.change(screen.getByTestId("quota-daily"), { target: { value: "1000" } });
    fireEvent.click(screen.getByTestId("quota-save"));
    await waitFor(() => expect(showError).toHaveBeenCalledTimes(1));
    expect(showError.mock.calls[0]![0]).toMatchObject({ code: "VALIDATION" });
    expect(screen.queryByTestId("error-banner")).toBeNull();
  });
});
